"""Site-wide request checks that run before any view."""

from asgiref.sync import iscoroutinefunction
from django.core.exceptions import BadRequest
from django.utils.decorators import sync_and_async_middleware


def _check_no_nul(request) -> None:
    """A NUL character in the path or the query string is refused (400): PostgreSQL text cannot hold one,
    and a view that looked such a value up would fail with a server error. Forms refuse NUL in their fields
    themselves."""
    if "\x00" in request.path or any(
        "\x00" in key or any("\x00" in value for value in values) for key, values in request.GET.lists()
    ):
        raise BadRequest("NUL characters are not allowed in a request's address.")


@sync_and_async_middleware
def refuse_nul(get_response):
    if iscoroutinefunction(get_response):

        async def middleware(request):
            _check_no_nul(request)
            return await get_response(request)

    else:

        def middleware(request):
            _check_no_nul(request)
            return get_response(request)

    return middleware
