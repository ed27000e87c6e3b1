from django.urls import path

from blackjack.history import views

urlpatterns = [
    path("blackjack/leaderboard/", views.leaderboard, name="blackjack_leaderboard"),
    path("blackjack/history/", views.history, name="blackjack_history"),
    path("blackjack/history/export.<str:fmt>", views.history_export, name="blackjack_history_export"),
    path("rounds/<int:round_id>/", views.round_replay, name="round_replay"),
    path("fairness/", views.fairness, name="fairness"),
]
