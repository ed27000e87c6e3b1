from django.urls import include, path

from blackjack import views

urlpatterns = [
    path("tables/new/", views.open_table, name="open_table"),
    path("tables/<int:table_id>/", views.table, name="table"),
    path("tables/<int:table_id>/sit/", views.sit, name="sit"),
    path("tables/<int:table_id>/strategy/", views.strategy_chart, name="strategy_chart"),
    path("how-to-play/", views.how_to_play, name="how_to_play"),
    path("tables/join/<str:token>/", views.join_private, name="join_private"),
    path("", include("blackjack.history.urls")),
]
