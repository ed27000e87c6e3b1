from django.urls import path

from lobby import views

urlpatterns = [
    path("", views.lobby, name="lobby"),
    path("history/", views.history, name="history"),
    path("leaderboards/", views.leaderboards, name="leaderboards"),
    path("players/<str:username>/", views.player, name="player_profile"),
]
