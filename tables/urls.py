from django.urls import path

from tables import views

urlpatterns = [
    path("", views.lobby, name="lobby"),
    path("leaderboard/", views.leaderboard, name="leaderboard"),
    path("history/", views.history, name="history"),
]
