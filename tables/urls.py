from django.urls import path

from tables import views

urlpatterns = [
    path("", views.lobby, name="lobby"),
    path("tables/new/", views.open_table, name="open_table"),
    path("tables/<int:table_id>/", views.table, name="table"),
    path("tables/<int:table_id>/sit/", views.sit, name="sit"),
    path("tables/join/<str:token>/", views.join_private, name="join_private"),
]
