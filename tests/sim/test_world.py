"""The simulated world: time order, scheduling points, kills, named random streams."""

from __future__ import annotations

import gc
import weakref

from local.sim.world import SECOND, Instance, Invocation, Killed, World, stream_seed


def _invocation(
    world: World, name: str, work: object, instance: Instance | None = None
) -> Invocation:
    return Invocation(name=name, instance=instance or Instance(name, "f"), work=work)  # type: ignore[arg-type]


def test_invocations_interleave_at_their_scheduling_points_in_time_order() -> None:
    world = World(1)
    seen: list[tuple[str, int]] = []

    def worker(name: str, delays: list[int]) -> object:
        def work() -> None:
            for delay in delays:
                world.block(delay)
                seen.append((name, world.now_us))

        return work

    world.call_at(0, lambda: world.start(_invocation(world, "a", worker("a", [3, 3]))))
    world.call_at(0, lambda: world.start(_invocation(world, "b", worker("b", [2, 2, 2]))))
    world.run()
    assert seen == [("b", 2), ("a", 3), ("b", 4), ("a", 6), ("b", 6)]


def test_a_killed_instance_raises_killed_at_its_next_scheduling_point() -> None:
    world = World(1)
    instance = Instance("i", "f")
    reached: list[str] = []

    def work() -> str:
        world.block(SECOND)
        reached.append("after the kill")
        return "ok"

    invocation = _invocation(world, "a", work, instance)
    world.call_at(0, lambda: world.start(invocation))
    world.call_at(SECOND // 2, lambda: world.kill(instance, "test"))
    world.run()
    assert reached == []
    assert invocation.outcome == "killed"
    assert issubclass(Killed, BaseException) and not issubclass(Killed, Exception)


def test_named_streams_do_not_move_each_other() -> None:
    alone = World(7).stream("agent", "m1").random()
    world = World(7)
    world.stream("fault/x").random()
    assert world.stream("agent", "m1").random() == alone
    assert stream_seed(7, "agent", "m1") != stream_seed(8, "agent", "m1")


def test_a_disabled_fault_does_not_fire_and_the_others_keep_their_draws() -> None:
    def fired(disabled: frozenset[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
        world = World(3, disabled=disabled)
        for _ in range(200):
            world.chance("site", 0.1)
            world.chance("other", 0.1)
        return world.fired

    everything = fired(frozenset())
    assert everything
    first = everything[0]
    assert fired(frozenset({first})) == everything[1:]


def test_a_closed_world_is_freed_with_an_invocation_still_parked_and_the_trace_kept() -> None:
    unwound: list[str] = []
    freed = _closed_world(unwound)
    gc.collect()
    assert unwound == ["finally"]
    assert freed() is None


def _closed_world(unwound: list[str]) -> weakref.ref[World]:
    """A world closed with one invocation parked and one greenlet idle (only a weak reference)."""
    world = World(1)

    def parked() -> None:
        try:
            world.block(10 * SECOND)
        finally:
            unwound.append("finally")

    world.call_at(0, lambda: world.start(_invocation(world, "ended", lambda: None)))
    world.call_at(0, lambda: world.start(_invocation(world, "parked", parked)))
    world.run(until_us=SECOND)
    trace = list(world.trace)
    world.close()
    assert world.trace == trace
    return weakref.ref(world)
