from accounts.selectors import get_balance


def wallet(request):
    """`wallet_balance`: the logged-in player's chips (int), or None. One query at most, none when
    anonymous."""
    user = getattr(request, "user", None)
    return {"wallet_balance": get_balance(user=user) if user is not None else None}
