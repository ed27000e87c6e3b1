"""What players, the clock and the websockets do to a table: actions, deadlines, presence, chat, and voiding
the rounds that cannot go on (at once, or when a clock starts)."""

import logging
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from accounts.models import LedgerEntry
from tables import broadcast, flow, viewmodel
from tables.models import ChatMessage, Phase, Presence, Round, Seat, Table
from tables.protocol import MAX_CHAT_BYTES
from tables.services import load, store
from tables.services.load import ActionRefused, RoundBroken

logger = logging.getLogger(__name__)


def perform(*, table_id: int, user, action: dict[str, Any], expected_version: int | None) -> int:
    """Apply one protocol action (`sit`, `leave`, `bet`, `ready`, `insurance`, `even_money`, `hit`, `stand`,
    `double`, `split`, `surrender`) for `user`; return the table's new version."""
    if user is None or not user.is_authenticated:
        raise ActionRefused("not_authenticated", "Log in to play.")
    try:
        with transaction.atomic():
            loaded = load.begin(table_id)
            player = acting_player(loaded, user)
            loaded.users.setdefault(user.pk, user)
            command = flow.Act(player=player, action=action, expected_version=expected_version)
            return store.apply(loaded, store.decide(loaded, command))
    except RoundBroken as broken:
        void_round(round_id=broken.round_id, reason=broken.reason)
        raise ActionRefused(
            "illegal_action", "The round could not be continued and was voided; every stake was refunded."
        ) from None


def acting_player(loaded: load.Loaded, user) -> flow.Player:
    """The acting player; whether they are barred (suspended or deactivated: an open websocket outlives both)
    comes from their seat's row, read under the table's lock, or else is read."""
    for seat in loaded.seats.values():
        if seat.user_id == user.pk:
            return load.player_of(seat.user)
    public = getattr(user, "public_name", None) or ""
    return flow.Player(user.pk, user.username, public, bool(load.BARRED.rows(user.pk)))


#: A deadline this overdue is applied by the clock's sweep even if a table actor here has its timer set.
OWNED_GRACE = timedelta(seconds=2)


def expire_due(*, now: datetime | None = None, owned=lambda table_id, version: False) -> int:
    """Apply every deadline due at `now` exactly once and stand up players gone longer than the grace period.
    A deadline that `owned(table_id, version)` says a live table actor's timer will apply is left to it
    (unless overdue by `OWNED_GRACE`). Returns how many tables were changed."""
    now = now or timezone.now()
    changed = 0
    due = Table.objects.filter(deadline__lte=now).values_list("id", "version", "deadline")
    for table_id, version, deadline in due:
        if deadline > now - OWNED_GRACE and owned(table_id, version):
            continue
        changed += guarded(table_id, flow.Expire(version), now)
    absent = (
        Seat.objects.filter(user__isnull=False, disconnected_at__lte=now - flow.DISCONNECT_GRACE)
        .filter(table__phase__in=[Phase.WAITING, Phase.BETTING, Phase.SETTLED])
        .order_by()
        .values_list("table_id", flat=True)
        .distinct()
    )
    for table_id in list(absent):
        changed += guarded(table_id, flow.StandUpAbsent(), now)
    return changed


def guarded(table_id: int, command: flow.Command, now: datetime) -> int:
    """Run a clock's command in its own transaction; 1 if it changed the table, 0 if not. A broken round is
    voided instead; any other failure is logged and leaves that table as it was."""
    try:
        return int(store.run(table_id, command, now=now) is not None)
    except RoundBroken as broken:
        return int(void_round(round_id=broken.round_id, reason=broken.reason))
    except ActionRefused as refused:
        logger.error("table %s: expiry refused: %s", table_id, refused)
        return 0
    except Exception:  # one table's failure must not stop the clock for every other table
        logger.exception("table %s: expiry failed", table_id)
        return 0


def note_presence(*, table_id: int, user, connected: bool, channel_name: str) -> None:
    """Record a websocket of `user` opening or closing on the table. When a seated player's last connection
    closes, the seat is marked disconnected (kept for `DISCONNECT_GRACE`); reconnecting clears the mark."""
    if user is None or not user.is_authenticated:
        return
    with transaction.atomic():
        loaded = load.begin(table_id, engine=False)
        seated = any(seat.user_id == user.pk for seat in loaded.seats.values())
        if connected:
            # A player who sat down before their first connection here (from the lobby) shows online now.
            arrived = seated and not Presence.objects.filter(table_id=table_id, user=user).exists()
            Presence.objects.get_or_create(
                channel_name=channel_name, defaults={"table_id": table_id, "user": user}
            )
            command = flow.Connected(user.pk, arrived=arrived)
        else:
            Presence.objects.filter(channel_name=channel_name).delete()
            if not seated or Presence.objects.filter(table_id=table_id, user=user).exists():
                return
            command = flow.Disconnected(user.pk)
        store.apply(loaded, store.decide(loaded, command))


def refresh_presence(
    held: dict[str, tuple[int, Any]], *, still_open=lambda channel_name: True, now: datetime | None = None
) -> int:
    """Vouch for the table websockets one process holds open (`tables.liveness`: channel name -> (table id,
    user)): their rows are seen now. A row found missing (dropped by `sweep_presence` while this process could
    not reach the database) is written again, which clears its seat's disconnected mark, unless `still_open`
    says that websocket has closed meanwhile (its own disconnect removed the row). Returns how many rows were
    written again."""
    if not held:
        return 0
    now = now or timezone.now()
    names = list(held)
    if Presence.objects.filter(channel_name__in=names).update(seen_at=now) == len(names):
        return 0
    present = set(Presence.objects.filter(channel_name__in=names).values_list("channel_name", flat=True))
    restored = 0
    for name in [name for name in names if name not in present]:
        if not still_open(name):
            continue
        table_id, user = held[name]
        try:
            note_presence(table_id=table_id, user=user, connected=True, channel_name=name)
        except ActionRefused:  # the table was deleted
            continue
        restored += 1
    return restored


def sweep_presence(*, now: datetime | None = None) -> int:
    """Drop the presence rows no process has vouched for within `PRESENCE_TIMEOUT_SECONDS`: their process died
    without closing its websockets. A player left with no connection at the table is marked disconnected, as
    after a normal disconnect, so the grace period and standing up follow. Returns the rows dropped."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.PRESENCE_TIMEOUT_SECONDS)
    stale = Presence.objects.filter(seen_at__lt=cutoff).values_list("channel_name", "table_id", "user_id")
    dropped = 0
    for channel_name, table_id, user_id in list(stale):
        with transaction.atomic():
            try:
                loaded = load.begin(table_id, engine=False)
            except ActionRefused:  # the table was deleted, and its presence rows with it
                continue
            # Re-checked under the table's lock: the row may have been vouched for or closed meanwhile.
            if not Presence.objects.filter(channel_name=channel_name, seen_at__lt=cutoff).delete()[0]:
                continue
            dropped += 1
            if not Presence.objects.filter(table_id=table_id, user_id=user_id).exists():
                store.apply(loaded, store.decide(loaded, flow.Disconnected(user_id)))
    return dropped


def post_chat(*, table_id: int, user, text: str) -> ChatMessage:
    """Store a chat line (stripped, 1 to `MAX_CHAT_BYTES` bytes of UTF-8) and tell the table's viewers."""
    if user is None or not user.is_authenticated:
        raise ActionRefused("not_authenticated", "Log in to chat.")
    if not isinstance(text, str) or not text.strip():
        raise ActionRefused("bad_message", "Write something to send.")
    text = text.strip()
    if len(text.encode("utf-8")) > MAX_CHAT_BYTES:
        raise ActionRefused("bad_message", f"A chat message is at most {MAX_CHAT_BYTES} bytes of UTF-8.")
    with transaction.atomic():
        table = Table.objects.filter(pk=table_id).first()
        if table is None:
            raise ActionRefused("bad_message", "No such table.")
        message = ChatMessage.objects.create(table=table, user=user, text=text)
        # This process forgets its kept parts at once (the others when the broadcast reaches their viewers):
        # one derived from a part without this line is not kept after it.
        transaction.on_commit(lambda: viewmodel.forget_table_views(table.pk, chat_id=message.pk))
        broadcast.chat_on_commit(table.pk, message.pk)
    return message


def void_round(*, round_id: int, reason: str) -> bool:
    """Void a round that cannot go on: refund every player's net stake from the ledger, retire its shoe (its
    position is unknown) and open the next round. Returns False if the round was already over."""
    with transaction.atomic():
        table_id = Round.objects.filter(pk=round_id).values_list("table_id", flat=True).first()
        if table_id is None:
            return False
        loaded = load.begin(table_id, engine=False)
        if round_id not in loaded.rounds:
            rnd = Round.objects.select_related("shoe").get(pk=round_id)
            loaded.rounds[rnd.pk] = (rnd, None)
            loaded.shoes.setdefault(rnd.shoe_id, (rnd.shoe, None))
        rnd = loaded.rounds[round_id][0]
        if rnd.is_over:
            return False
        nets = (
            LedgerEntry.objects.filter(round_ref=rnd.pk, wallet__user__isnull=False)
            .values_list("wallet__user_id")
            .annotate(net=Sum("amount"))
        )
        refunds = {user_id: -net for user_id, net in nets if net < 0}
        command = flow.Void(round=load.round_info_of(rnd), reason=reason, refunds=refunds)
        store.apply(loaded, store.decide(loaded, command))
    logger.warning("voided round %s of table %s: %s", round_id, table_id, reason)
    return True


def recover_tables(*, clear_presence: bool = False) -> int:
    """Run when a clock starts: void every unfinished round whose stored state cannot be loaded (deadlines
    that passed while no server ran are then applied by `expire_due`). With `clear_presence` (one process
    serves every websocket, so none survived the restart) every presence row is dropped and every seated
    player counts as disconnected from now: they keep their seats if they reconnect within the grace period.
    Returns the number of rounds voided."""
    voided = 0
    for rnd in Round.objects.filter(voided=False, settled_at__isnull=True).select_related("shoe"):
        try:
            load.load_engine(rnd)
        except RoundBroken as broken:
            voided += void_round(round_id=rnd.pk, reason=broken.reason)
    if clear_presence:
        Presence.objects.all().delete()
        seated = Seat.objects.filter(user__isnull=False, disconnected_at__isnull=True).order_by()
        for table_id in set(seated.values_list("table_id", flat=True)):
            store.run(table_id, flow.AllDisconnected(), engine=False)
    return voided
