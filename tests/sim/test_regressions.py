"""Seeds that broke a rule on the turn logic of 2026-12-01 (with the ports), kept as regression tests.

A seed reproduces a history for the code it was found on: once the code
changes, the same seed may take another path. Each test therefore names the
rule and the turn, and passes when that turn keeps the rule. The turn-layer
seeds (F1, F5, F3, S1 and the two questions left open) failed on main at
e977107, before shell2's fixes, and pass since. Seed 29 (text taken back)
failed at d9a4a5d and passes on main at c4df3f9. The notices told twice after a
take-over (seeds 1, 337, 566) failed on main at c4df3f9 (337 and 566 still on
dcbf45a; seed 1 passes there, rerouted) and pass since fix3's
fix (a mid-turn notice is recorded before it is posted); the question
left answering by a turn that kept failing (seed 512) failed there too, and
so did seed 433 (an answer taken for a pause its carrier died before recording).
The kept-failing notice told twice (seed 2512: told, then the turn's end not
recorded, and the next take-over told it again) failed on main at 4ba9092.
Seeds 27 and 30 ("S3 first result", on main at 1c361e9) were the oracle's: a
snapshot with two results of one call (the contract: the last counts), and a
result read only by the stop's own read of the task (the stop ends the reply
where it stands); they pass since the oracle follows both rules. Seed 17 (a
step appended running by the carrier a stop had taken the turn from, while its
lease ran) failed on main at 9c82ac0 and passes since a call that changes a
step's card reads the session first. Seed 656 (a posted reply's message edited
by a function after its last checkpoint, then laid out again elsewhere by the
one taking over: the text shown twice) failed on main at 9c82ac0 and passes
since a take-over of a posted reply writes each of its messages again.
The stop's notice told twice (seeds 23, 26: posted, then its function killed
before the turn was recorded done, and the stop's retry told it again) and the
no-output notice lost (seed 37: its function killed between the checkpoint
that records it as told and the post) failed on main at 1c361e9 and pass since
the end's notice is read back from the thread (``shared.core.telling``).
A posted reply whose text the agent took back whole kept showing it (seeds
2972, 2590, 2693: the fallback layout wrote no message left without text)
on main at 8b99d73, and passes since such a message is written to show none.
Seeds 178, 262 and 1781 were the oracle's: it took a dead carrier's read as
kept when a write of the turn at the same microsecond came before it, or when
its last write after it stored no checkpoint (its shown steps); they pass since
the oracle orders reads and writes by their place and counts checkpoints only.
Seeds 4979 (a stopped turn sent to the agent after the next one, by a carrier that
waited out a 429 on users.info), 5877 (a streamed message the dead carrier edited
after its last checkpoint, kept by the taker) and 8437 (the cancel notice told
again after a Slack 5xx), found in seeds 3001..10000, failed on main at 69f2d47.
Seeds 93, 741 and 2859 (a step its dead carrier closed "continued below" after the
last checkpoint, before it posted the step's card; the stop's function, from that
checkpoint, never closed it) failed on main at 85ce02e. So did seeds 82, 153, 224 and
373 (a carrier's chat.update of a step's card answered 429; the stop's function closed
the card during the wait, and slack_sdk's retry showed it running again).
Seeds 2616 and 66 ("S3 first result", on main at 85ce02e) were the oracle's: a carrier
that died read a call's first result and showed it (2616) or kept it as shown (66), and
the function taking over showed it, where the oracle counted only the results a later
checkpoint held (the snapshot's last); they pass since the first result any carrier read
counts too. Seeds 4972 and 5469 (a step closed "No result came from the agent" when the
agent's context changed mid-answer: the notice ended the reply, and the result came after)
failed on main at 85ce02e and pass since a notice told mid-answer rolls the stream over.
Seeds 899, 1820, 2449 and 5002 (a person's stop taken while the carrier lived, in a posted
reply whose card waited for its chat.update: the carrier had read the step's result, and the
stop's function closed the step "No result came from the agent" from the checkpoint before
that read) failed on main at 6730bcb and pass since the stop's function finishes a step still
running at the result the task holds as CancelTask answers it.
Seeds 946, 1234, 246, 4058, 3164, 1675 and 1408 (a message of the reply posted by a carrier
that died, or that a person's stop took the turn from, before its next checkpoint named it:
the function taking over showed its text and steps again in a new message, or left its steps
running there) failed on main at 085127b and pass since each message a reply posts is marked
with Slack message metadata, and a taker reads the thread back and adopts the marked ones its
checkpoint does not name.
Seeds 826, 868, 3944 and 5866 (a turn ended as kept_failing outside a run, whose reply was
not restored, so the steps its messages showed running stayed running) failed on main at
af5c305 and pass since that end restores the reply from the last checkpoint to close it.
Seed 6649 (the checkpoint saved when the agent names its task held the event, but not the
text it brought: a function taking over applied the agent's take-back of that text, made while
no one followed the stream) failed on main at d165253 and passes since the event's changes
are taken into the reply before that checkpoint, and its Slack calls made after it.
Seeds 3418, 3713, 4450, 4859, 5565, 5831 (a step shown again) and 9846, 9251 (text shown
twice; found in seeds 6001..10000) failed on main at 6020c39, and 3084 (text shown twice)
on 6eab173: a carrier that died, that a
person's stop took the turn from, or that a Slack error ended, started a stream after its
last checkpoint, which chat.startStream's lack of metadata left unknown to the function
taking over. They pass since the turn records each stream's ts as soon as Slack answers
and the taker adopts the recorded streams its checkpoint does not name.
Seed 14342 (found in seeds 14001..17000: a person pressed stop just after the carrier recorded
the turn's end as told; the stop's function read the thread back while the carrier's notice
was in flight and posted it too, "The agent's task failed. (timeout)" twice) failed on main at
a1203ed and passes since a stop that finds the end recorded as told by its carrier leaves
the end to it.
Seeds 9330 and 12419 (a person pressed stop as one turn ended; the thread's next turn, begun
a fraction of a second after, was stopped, as its function's clock, behind Slack's, put its
start before the press) failed on main at 045938a and pass since a press that close to a
turn's start, with no stream of it stopped, stops nothing (``agent_session.stop_target``).
Seed 18734 (a function started a stream and died before the turn's first checkpoint; the next
began afresh and streamed the answer in a new stream its checkpoint named, and died too; each
function taking over stopped the older stream it adopted, then edited the checkpoint's, still
streaming, and was refused with streaming_state_conflict, until the turn failed) failed on main
at 11dabf1 and passes since a reply taken over stops every stream it cannot tell is stopped
(``ReplyState.adopt``).
"""

from __future__ import annotations

import pytest

from local.sim.run import broken_rules, run_seed

FINDINGS = [
    pytest.param(
        21,
        "S0 crash",
        "C0SIM2-1700000533.013968",
        id="F1-message-reply-takeover-asserts",
    ),
    pytest.param(
        41,
        "S6 notice twice",
        "C0SIM3-1700000170.985264",
        id="F5-final-notice-twice-after-a-kill",
    ),
    pytest.param(
        5,
        "S3 step once",
        "C0SIM2-1700000186.028714",
        id="F3-step-twice-after-a-takeover",
    ),
    pytest.param(
        165,
        "S1 lost",
        "C0SIM2-1700000238.712994",
        id="S1-answer-never-sent-after-its-sender-died",
    ),
    pytest.param(
        60,
        "L hygiene",
        "C0SIM1-1700000495.684698",
        id="question-left-answering-after-its-turn-ended",
    ),
    pytest.param(
        153,
        "L hygiene",
        "C0SIM2-1700000336.732756",
        id="question-left-open-after-its-turn-ended",
    ),
    pytest.param(
        29,
        "S3 text",
        "C0SIM2-1700000232.886681",
        id="text-shown-that-the-agent-took-back",
    ),
    pytest.param(
        1,
        "S6 notice twice",
        "C0SIM1-1700000434.949799",
        id="context-changed-told-again-after-a-takeover",
    ),
    pytest.param(
        337,
        "S6 notice twice",
        "C0SIM3-1700000045.328012",
        id="busy-notice-told-again-after-a-takeover-337",
    ),
    pytest.param(
        566,
        "S6 notice twice",
        "C0SIM1-1700001156.120023",
        id="busy-notice-told-again-after-a-takeover-566",
    ),
    pytest.param(
        512,
        "L hygiene",
        "C0SIM2-1700000212.174174",
        id="question-left-answering-after-its-turn-kept-failing",
    ),
    pytest.param(
        433,
        "S1 lost",
        "C0SIM2-1700001189.124474",
        id="S1-answer-never-sent-when-the-pause-was-not-recorded",
    ),
    pytest.param(
        2512,
        "S6 notice twice",
        "C0SIM3-1700000139.513083",
        id="kept-failing-notice-told-again-after-a-takeover",
    ),
    pytest.param(
        27,
        "S3 first result",
        "C0SIM2-1700000482.435716",
        id="oracle-a-snapshots-last-result-of-a-call-counts",
    ),
    pytest.param(
        30,
        "S3 first result",
        "C0SIM3-1700000186.355069",
        id="oracle-a-result-read-only-by-the-stop-is-not-shown",
    ),
    pytest.param(
        17,
        "S3 step running",
        "C0SIM3-1700000023.112637",
        id="step-shown-running-by-the-carrier-a-stop-took-the-turn-from",
    ),
    pytest.param(
        656,
        "S3 text",
        "C0SIM3-1700000075.083809",
        id="text-twice-after-a-takeover-of-a-posted-reply",
    ),
    pytest.param(
        23,
        "S6 notice twice",
        "C0SIM3-1700000555.740217",
        id="stop-notice-told-again-by-the-stops-retry-23",
    ),
    pytest.param(
        26,
        "S6 notice twice",
        "C0SIM2-1700000025.173812",
        id="stop-notice-told-again-by-the-stops-retry-26",
    ),
    pytest.param(
        37,
        "S6 no output untold",
        "C0SIM2-1700000210.417689",
        id="no-output-notice-lost-between-record-and-post",
    ),
    pytest.param(
        2972,
        "S3 text",
        "C0SIM2-1700000142.108412",
        id="posted-text-taken-back-whole-kept-showing-2972",
    ),
    pytest.param(
        2590,
        "S3 text",
        "C0SIM1-1700000642.978113",
        id="posted-text-taken-back-whole-kept-showing-2590",
    ),
    pytest.param(
        2693,
        "S3 text",
        "C0SIM2-1700000433.667364",
        id="posted-text-taken-back-whole-kept-showing-2693",
    ),
    pytest.param(
        178,
        "S3 text",
        "C0SIM2-1700000223.303760",
        id="oracle-a-read-after-a-write-of-the-same-microsecond-is-not-kept",
    ),
    pytest.param(
        262,
        "S6 no output untold",
        "C0SIM3-1700000478.846039",
        id="oracle-a-take-back-read-after-the-last-checkpoint-is-not-kept",
    ),
    pytest.param(
        1781,
        "S3 text",
        "C0SIM2-1700000162.561057",
        id="oracle-a-write-of-shown-steps-keeps-no-read",
    ),
    pytest.param(
        4979,
        "S2 order",
        "C0SIM3-1700000203.418353",
        id="S2-a-stopped-turn-sent-after-its-authors-name-was-looked-up",
    ),
    pytest.param(
        5877,
        "S3 text",
        "C0SIM1-1700000077.844140",
        id="S3-a-streamed-message-edited-after-the-last-checkpoint",
    ),
    pytest.param(
        8437,
        "S6 notice twice",
        "C0SIM2-1700000464.276733",
        id="S6-a-cancel-notice-told-again-after-a-slack-5xx",
    ),
    pytest.param(
        93,
        "S3 step once",
        "C0SIM2-1700000415.631877",
        id="S3-a-step-closed-continued-below-by-a-dead-carrier-93",
    ),
    pytest.param(
        741,
        "S3 step once",
        "C0SIM1-1700000352.817715",
        id="S3-a-step-closed-continued-below-by-a-dead-carrier-741",
    ),
    pytest.param(
        2859,
        "S3 step once",
        "C0SIM2-1700000066.827869",
        id="S3-a-step-closed-continued-below-by-a-dead-carrier-2859",
    ),
    pytest.param(
        82,
        "S3 step running",
        "C0SIM1-1700000464.525953",
        id="S3-a-card-change-retried-after-a-stop-took-the-turn-82",
    ),
    pytest.param(
        153,
        "S3 step running",
        "C0SIM2-1700000231.619995",
        id="S3-a-card-change-retried-after-a-stop-took-the-turn-153",
    ),
    pytest.param(
        224,
        "S3 step running",
        "C0SIM1-1700000297.408447",
        id="S3-a-card-change-retried-after-a-stop-took-the-turn-224",
    ),
    pytest.param(
        373,
        "S3 step running",
        "C0SIM3-1700000007.769930",
        id="S3-a-card-change-retried-after-a-stop-took-the-turn-373",
    ),
    pytest.param(
        2616,
        "S3 first result",
        "C0SIM3-1700000078.189498",
        id="oracle-a-first-result-shown-by-a-carrier-that-died-counts",
    ),
    pytest.param(
        66,
        "S3 first result",
        "C0SIM2-1700000366.780087",
        id="oracle-a-first-result-kept-as-shown-by-a-carrier-that-died-counts",
    ),
    pytest.param(
        4972,
        "S3 first result",
        "C0SIM3-1700000216.241975",
        id="step-closed-no-result-by-a-context-change-mid-answer-4972",
    ),
    pytest.param(
        5469,
        "S3 first result",
        "C0SIM2-1700000784.162560",
        id="step-closed-no-result-by-a-context-change-mid-answer-5469",
    ),
    pytest.param(
        899,
        "S3 first result",
        "C0SIM3-1700000285.996794",
        id="step-closed-no-result-by-a-stop-after-its-carrier-read-the-result-899",
    ),
    pytest.param(
        1820,
        "S3 first result",
        "C0SIM2-1700000557.436560",
        id="step-closed-no-result-by-a-stop-after-its-carrier-read-the-result-1820",
    ),
    pytest.param(
        2449,
        "S3 first result",
        "C0SIM1-1700000165.524481",
        id="step-closed-no-result-by-a-stop-after-its-carrier-read-the-result-2449",
    ),
    pytest.param(
        5002,
        "S3 first result",
        "C0SIM3-1700000295.467456",
        id="step-closed-no-result-by-a-stop-after-its-carrier-read-the-result-5002",
    ),
    pytest.param(
        946,
        "S3 step once",
        "C0SIM1-1700000103.318603",
        id="step-shown-again-after-a-message-posted-after-the-checkpoint-946",
    ),
    pytest.param(
        1234,
        "S3 step once",
        "C0SIM3-1700000497.932900",
        id="step-shown-again-after-a-message-posted-after-the-checkpoint-1234",
    ),
    pytest.param(
        246,
        "S3 step running",
        "C0SIM3-1700000458.373522",
        id="step-left-running-in-a-message-posted-after-the-checkpoint-246",
    ),
    pytest.param(
        4058,
        "S3 step running",
        "C0SIM2-1700000460.911748",
        id="step-left-running-in-a-message-posted-after-the-checkpoint-4058",
    ),
    pytest.param(
        3164,
        "S3 first result",
        "C0SIM1-1700000954.696938",
        id="step-left-in-progress-in-a-message-posted-after-the-checkpoint-3164",
    ),
    pytest.param(
        1675,
        "S3 text",
        "C0SIM1-1700000138.750338",
        id="text-twice-after-a-message-posted-after-the-checkpoint-1675",
    ),
    pytest.param(
        1408,
        "S3 text",
        "C0SIM1-1700000369.670185",
        id="text-twice-after-a-message-posted-after-the-checkpoint-1408",
    ),
    pytest.param(
        826,
        "S3 step running",
        "C0SIM2-1700000471.953090",
        id="step-left-running-by-a-kept-failing-end-826",
    ),
    pytest.param(
        868,
        "S3 step running",
        "C0SIM3-1700000666.799613",
        id="step-left-running-by-a-kept-failing-end-868",
    ),
    pytest.param(
        3944,
        "S3 step running",
        "C0SIM2-1700000458.751664",
        id="step-left-running-by-a-kept-failing-end-3944",
    ),
    pytest.param(
        5866,
        "S3 first result",
        "C0SIM3-1700000580.992475",
        id="step-left-in-progress-by-a-kept-failing-end-5866",
    ),
    pytest.param(
        6649,
        "S3 text",
        "C0SIM3-1700000125.445597",
        id="text-of-the-event-naming-the-task-left-out-of-its-checkpoint-6649",
    ),
    pytest.param(
        3418,
        "S3 step once",
        "C0SIM3-1700000555.591249",
        id="step-shown-again-after-a-stream-started-after-the-checkpoint-3418",
    ),
    pytest.param(
        3713,
        "S3 step once",
        "C0SIM1-1700000065.680020",
        id="step-shown-again-after-a-stream-started-after-the-checkpoint-3713",
    ),
    pytest.param(
        4450,
        "S3 step once",
        "C0SIM3-1700000271.565193",
        id="step-shown-again-after-a-stream-started-after-the-checkpoint-4450",
    ),
    pytest.param(
        4859,
        "S3 step once",
        "C0SIM3-1700000020.779567",
        id="step-shown-again-after-a-stream-started-after-the-checkpoint-4859",
    ),
    pytest.param(
        5565,
        "S3 step once",
        "C0SIM1-1700000338.701213",
        id="step-shown-again-after-a-stream-started-after-the-checkpoint-5565",
    ),
    pytest.param(
        5831,
        "S3 step once",
        "C0SIM2-1700000574.055196",
        id="step-shown-again-after-a-stream-started-after-the-checkpoint-5831",
    ),
    pytest.param(
        9846,
        "S3 text",
        "C0SIM3-1700000493.128175",
        id="text-twice-after-a-stream-started-after-the-checkpoint-9846",
    ),
    pytest.param(
        9251,
        "S3 text",
        "C0SIM2-1700000410.964318",
        id="text-twice-after-a-stream-started-after-the-checkpoint-9251",
    ),
    pytest.param(
        3084,
        "S3 text",
        "C0SIM3-1700000124.561290",
        id="text-twice-after-a-stream-started-after-the-checkpoint-3084",
    ),
    pytest.param(
        14342,
        "S6 notice twice",
        "C0SIM2-1700000567.994509",
        id="end-told-twice-by-a-stop-pressed-while-its-notice-was-in-flight-14342",
    ),
    pytest.param(
        9330,
        "S7 stopped",
        "C0SIM3-1700000443.438969",
        id="next-turn-stopped-by-a-press-as-it-began-9330",
    ),
    pytest.param(
        12419,
        "S7 stopped",
        "C0SIM1-1700000533.633580",
        id="next-turn-stopped-by-a-press-as-it-began-12419",
    ),
    pytest.param(
        18734,
        "S0 crash",
        "C0SIM1-1700000279.939707",
        id="checkpoints-stream-edited-while-it-streams-18734",
    ),
    pytest.param(
        18734,
        "S0 crash",
        "C0SIM1-1700000282.395623",
        id="checkpoints-stream-edited-while-it-streams-queued-turn-18734",
    ),
]
"""Seeds as found on main at d9a4a5d with the simulator's per-seed settings, Slack's
re-sends during a running delivery and the agent's 401 and -32001 faults (each change to the
simulator reroutes histories, so seeds are re-found with it)."""


@pytest.mark.parametrize(("seed", "rule", "turn"), FINDINGS)
def test_the_turn_keeps_the_rule(seed: int, rule: str, turn: str) -> None:
    assert (rule, turn) not in broken_rules(run_seed(seed))
