"""The "Table managers" staff group: may add and edit tables and rule presets and look at rounds, shoes and
table events; no permission on users, wallets or the ledger (money and users stay with superusers)."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP = "Table managers"
PERMISSIONS = [
    ("tables", "add_table"),
    ("tables", "change_table"),
    ("tables", "view_table"),
    ("tables", "add_rulepreset"),
    ("tables", "change_rulepreset"),
    ("tables", "view_rulepreset"),
    ("tables", "view_round"),
    ("tables", "view_shoe"),
    ("tables", "view_tableevent"),
]


def create_permissions_now(apps):
    """Permissions are normally created after all migrations ran; create them now so a group can hold them."""
    for app_config in apps.get_app_configs():
        models_module, app_config.models_module = getattr(app_config, "models_module", None), True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = models_module


def create_group(apps, schema_editor):
    create_permissions_now(apps)
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=GROUP)
    for app_label, codename in PERMISSIONS:
        group.permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))


def remove_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("tables", "0002_history_records"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_group, remove_group)]
