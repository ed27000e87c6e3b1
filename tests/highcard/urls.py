from django.urls import path

from tests.highcard import views

urlpatterns = [path("history/<int:table_id>/", views.history, name="highcard_history")]
