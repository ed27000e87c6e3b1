"""A table's chat is the site's now (`live.ChatLine`, keyed by game and table): blackjack's lines move there,
oldest first, with their authors and times, and blackjack's own table of them goes."""

from django.db import migrations

GAME = "blackjack"


def move_lines(apps, schema_editor):
    ChatMessage = apps.get_model("tables", "ChatMessage")
    ChatLine = apps.get_model("live", "ChatLine")
    batch = []
    for message in ChatMessage.objects.order_by("id").iterator(chunk_size=2000):
        batch.append(
            ChatLine(
                game=GAME,
                table_ref=message.table_id,
                user_id=message.user_id,
                text=message.text,
                created_at=message.created_at,
            )
        )
        if len(batch) >= 2000:
            ChatLine.objects.bulk_create(batch)
            batch = []
    ChatLine.objects.bulk_create(batch)


class Migration(migrations.Migration):

    dependencies = [
        ("tables", "0012_ledger_rows_of_blackjack"),
        ("live", "0001_chat_lines"),
    ]

    operations = [
        migrations.RunPython(move_lines, migrations.RunPython.noop),
        migrations.DeleteModel(name="ChatMessage"),
    ]
