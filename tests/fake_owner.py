"""A fake owner process for the forwarding tests of every game (in-memory layer): a second receiver of
forwarded commands under another name, which the table row names as the lease holder."""

from datetime import timedelta

from django.utils import timezone

from live import forward
from live import lease as lease_module


def act_for(owner: str, monkeypatch) -> None:
    """This process's actors take the lease as `owner` while the row names `owner` (as the owning process
    would), not under this process's own name: they are the fake owner's actors."""
    acquire = lease_module.acquire

    def acquire_as_holder(model, key, *, now, me=None):
        holder = model.objects.values_list("owner", flat=True).filter(pk=key).first()
        return acquire(model, key, now=now, me=owner if holder == owner else me)

    monkeypatch.setattr(lease_module, "acquire", acquire_as_holder)


def log_commands(kind: str, monkeypatch) -> list[dict]:
    """Every forwarded command of `kind` the receivers handle, in order (the list is filled as they come)."""
    handled: list[dict] = []
    apply = forward._handlers[kind]

    async def logged(body):
        handled.append(body)
        return await apply(body)

    monkeypatch.setitem(forward._handlers, kind, logged)
    return handled


async def stop_receivers(owner: str) -> None:
    """Stop the fake owner's receiver and this process's."""
    for name in (owner, None):
        await forward.stop(name)


def lease(model, table, owner: str, *, seconds: float = 3600) -> None:
    """`owner` holds the table's lease (epoch 1) for `seconds`."""
    model.objects.filter(pk=table.pk).update(
        owner=owner, epoch=1, lease_until=timezone.now() + timedelta(seconds=seconds)
    )
