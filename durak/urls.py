from django.urls import path

from durak import views

urlpatterns = [
    path("open/", views.open_table, name="durak_open"),
    path("play/", views.quick_play, name="durak_quick_play"),
    path("<int:table_id>/", views.table, name="durak_table"),
    path("join/<str:token>/", views.join, name="durak_join"),
    path("rules/", views.guide, name="durak_guide"),
    path("leaderboard/", views.leaderboard, name="durak_leaderboard"),
    path("history/", views.history, name="durak_history"),
    path("history/export.<str:fmt>", views.history_export, name="durak_history_export"),
    path("games/<int:game_id>/", views.replay, name="durak_replay"),
]
