from django.urls import path

from blackjack.history import views

urlpatterns = [
    path("leaderboard/", views.leaderboard, name="leaderboard"),
    path("history/", views.history, name="history"),
    path("history/export.<str:fmt>", views.history_export, name="history_export"),
    path("rounds/<int:round_id>/", views.round_replay, name="round_replay"),
    path("players/<str:username>/", views.player_profile, name="player_profile"),
    path("fairness/", views.fairness, name="fairness"),
]
