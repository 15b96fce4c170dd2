"""The oracle: what must hold for every history, from the contract's text.

It judges what outsiders observed (the agent's request log and the events it
delivered, Slack's messages, Firestore's write log), not Kourier's own
view, and it uses nothing of ``shared.core`` to decide: the expected text
comes from ``local.sim.reference``, and the contract's quoted sentences are
written here as the contract writes them. The sentences the contract leaves
to Kourier ("the thread is told") are read from ``shared.core.notices``, the
one place the product keeps them.

- S0 No invocation fails with an exception nobody planned.
- S1 Every turn reaches exactly one outcome, once, and keeps it.
- S2 Within a thread, turns reach the agent one at a time, in Slack order.
- S3 Each turn's text in the thread is the reference assembler's text of
  what the agent delivered; each tool step is one card, finished as its
  first result said, none left running; a step with no result never shows
  complete, unless it waits for a person's answer.
- S4 A turn's sends carry its fixed messageId; a new turn never sets taskId.
- S6 Every notice is a known sentence, and none is repeated for one turn;
  no agent error text (the canary) reaches Slack.
- S7 A turn ends ``stopped`` only after someone who may stop it (its author
  or an approver) pressed the stop button while the thread carried it, and
  its thread is told so.
- L  Liveness: every turn is done once the faults stop.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from local.sim.agent import CANARY, HITL
from local.sim.slack import BOT_USER, SlackMessage, card_output

if TYPE_CHECKING:
    from local.sim.run import Simulation

CONTRACT_SENTENCES = (
    "The agent finished without any output.",
    "The agent's task failed.",
)
CATEGORIES = ("context limit", "rate limit", "authentication", "timeout", "permission")
CONTRACT_REASONS = (
    "the agent could not be reached",
    "agent card lists no JSON-RPC interface",
    "agent requires an unsupported extension",
)
CONTINUED_OUTPUTS = ("continued in the next message", "continued below")


@dataclass(frozen=True)
class Violation:
    """One broken rule: its code and what broke it."""

    code: str
    detail: str

    def __str__(self) -> str:
        return f"{self.code}: {self.detail}"


def _step_waits_for_answer() -> str:
    """What a step with no result shows while its task waits for a person (Kourier's words)."""
    from shared.core import notices

    return notices.STEP_WAITS_FOR_ANSWER


def known_notices() -> set[str]:
    """Every sentence Kourier may post of its own."""
    from shared.core import notices

    sentences = set(CONTRACT_SENTENCES)
    sentences |= {f"The agent's task failed. ({category})" for category in CATEGORIES}
    reasons = set(CONTRACT_REASONS) | {
        notices.NO_STREAMING,
        notices.CREDENTIALS_REJECTED,
        notices.IDENTITY_REFUSED,
        notices.KEPT_FAILING,
        notices.BINDING_GONE,
    }
    sentences |= {notices.TURN_FAILED.format(reason=reason) for reason in reasons}
    for name in dir(notices):
        value = getattr(notices, name)
        if not name.isupper():
            continue
        if isinstance(value, str) and "{" not in value:
            sentences.add(value)
        elif hasattr(value, "__dataclass_fields__"):  # a notice with variants (CancelNotice)
            sentences |= {v for v in vars(value).values() if isinstance(v, str)}
    return sentences | stop_notices()


def stop_notices() -> set[str]:
    """What a thread is told when one of the people stopped its turn."""
    from local.sim.people import PEOPLE
    from shared.core import notices

    variants = (notices.STOPPED.stopped, notices.STOPPED.not_stopped)
    return {text.replace("{who}", f"<@{user}>") for text in variants for user in PEOPLE}


def visible_text(message: SlackMessage) -> str:
    """The text a person reads in one bot message (markdown blocks, else its text).

    An answer's feedback buttons (a ``context_actions`` block after it) hold no text, and
    a message whose text was all taken back shows "…", no text.
    """
    blocks = [b for b in message.blocks if b.get("type") != "context_actions"]
    if blocks:
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "markdown")
    else:
        text = message.text
    return "" if text == "…" else text


def notice_text(message: SlackMessage, sentences: set[str]) -> str | None:
    """The sentence of a notice (one context block marked as Kourier's), else None."""
    blocks = message.blocks
    if not blocks and message.text in sentences:
        return message.text  # a notice posted as plain text
    if len(blocks) != 1 or blocks[0].get("type") != "context":
        return None
    elements = blocks[0].get("elements") or []
    return str(elements[-1].get("text", "")) if elements else ""


def is_prompt(message: SlackMessage) -> bool:
    """Whether a bot message is a question's or an approval's prompt."""
    return any(b.get("type") in ("actions", "input", "section", "header") for b in message.blocks)


class Oracle:
    """Checks one finished simulation."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.violations: list[Violation] = []
        self.accepted: list[Violation] = []

    def fail(self, code: str, detail: str) -> None:
        self.violations.append(Violation(code, detail))

    def check(self) -> list[Violation]:
        self.crashes()
        turns = self.turn_histories()
        self.outcomes(turns)
        self.order(turns)
        self.message_ids()
        self.approvals()
        self.thread_texts(turns)
        self.stops(turns)
        self.hygiene()
        return self.violations

    # Hygiene at quiescence -----------------------------------------------------------------

    def hygiene(self) -> None:
        """Once every turn has ended, nothing may still look busy: no session holding a turn or
        waiting on a question, no question open or being answered."""
        collections = self.sim.documents.collections
        turns = collections.get("kourier_turns", {})
        if any(stored.data.get("status") != "done" for stored in turns.values()):
            return  # not quiescent: liveness has said so
        for key, stored in sorted(collections.get("kourier_sessions", {}).items()):
            session = stored.data
            active = session.get("active_turn")
            if active is not None:
                self.fail("L hygiene", f"session {key} still holds turn {active}, which is done")
            if session.get("open_question") is not None:
                self.fail("L hygiene", f"session {key} still waits on {session['open_question']}")
        for key, stored in sorted(collections.get("kourier_questions", {}).items()):
            status = stored.data.get("status")
            if status in ("open", "answering"):
                turn = stored.data.get("turn_id")
                self.fail("L hygiene", f"question {key} of turn {turn} is still {status}")

    # S0 ------------------------------------------------------------------------------------

    def crashes(self) -> None:
        for failure in self.sim.platform.failures:
            self.fail("S0 crash", f"{failure.invocation}: {failure.error}")

    # S1 and liveness ----------------------------------------------------------------------

    def turn_histories(self) -> dict[str, list[tuple[int, str, dict[str, Any]]]]:
        turns: dict[str, list[tuple[int, str, dict[str, Any]]]] = defaultdict(list)
        for at_us, invocation, _op, collection, key, data, _place in self.sim.documents.writes:
            if collection == "kourier_turns":
                turns[key].append((at_us, invocation, data))
        return turns

    def outcomes(self, turns: dict[str, list[tuple[int, str, dict[str, Any]]]]) -> None:
        for turn_id, writes in turns.items():
            done = [(at, inv, data) for at, inv, data in writes if data.get("status") == "done"]
            if not done:
                last = writes[-1][2].get("status")
                self.fail("L liveness", f"turn {turn_id} never ended (last status {last})")
                continue
            first = done[0][2]
            for at, invocation, data in writes[writes.index(done[0]) + 1 :]:
                if data.get("status") != "done" or data.get("outcome") != first.get("outcome"):
                    self.fail(
                        "S1 one outcome",
                        f"turn {turn_id} ended {first.get('outcome')!r}, then {invocation} wrote "
                        f"status {data.get('status')!r} outcome {data.get('outcome')!r}",
                    )
                    break
        answers = self.answers_sent()
        for post in self.sim.people.mentions():
            if post not in turns and post not in answers:
                self.fail("S1 lost", f"the mention {post} never became a turn")

    def answers_sent(self) -> set[str]:
        """The replies taken as an answer that reached the agent.

        A reply is an answer once a question's document lists it; it reached
        the agent when an answer to that question was sent after that. The
        question may be asked again later (the agent did not take the answer),
        and its document then lists no replies: the reply still reached the
        agent, and is no lost message.
        """
        taken: dict[str, tuple[str, int]] = {}
        for at_us, _inv, _op, collection, key, data, _place in self.sim.documents.writes:
            if collection != "kourier_questions":
                continue
            for reply in data.get("replies") or []:
                taken.setdefault(reply, (key, at_us))
        sent: dict[str, list[int]] = defaultdict(list)
        for request in self.sim.agents.requests:
            message_id = request.message_id or ""
            if message_id.startswith("answer-"):
                sent[message_id.removeprefix("answer-").rsplit("-", 1)[0]].append(request.at_us)
        return {
            reply for reply, (key, at_us) in taken.items() if any(at >= at_us for at in sent[key])
        }

    # S2 ------------------------------------------------------------------------------------

    def order(self, turns: dict[str, list[tuple[int, str, dict[str, Any]]]]) -> None:
        """Turns reach the agent one at a time, in Slack order.

        Kourier decides which turn goes next when it claims the thread's
        session for it, so the order is judged there: a later message must
        not be claimed (and sent) past an earlier one of its thread that was
        already stored. One stored after that claim waits for the next.
        Stored and claimed are compared by their place in the write log.
        """
        done_at: dict[str, int] = {}
        session_of: dict[str, str] = {}
        recorded_at: dict[str, int] = {}
        claimed_at: dict[str, int] = {}
        for index, (_at, _inv, _op, collection, key, data, _place) in enumerate(
            self.sim.documents.writes
        ):
            if collection == "kourier_turns":
                recorded_at.setdefault(key, index)
            elif collection == "kourier_sessions" and data.get("active_turn"):
                claimed_at.setdefault(str(data["active_turn"]), index)
        for turn_id, writes in turns.items():
            session_of[turn_id] = writes[0][2]["session_id"]
            for at, _inv, data in writes:
                if data.get("status") == "done":
                    done_at[turn_id] = at
                    break
        first_send: dict[str, int] = {}
        for request in self.sim.agents.requests:
            if request.method not in ("SendStreamingMessage", "message/stream") or request.task_id:
                continue
            turn_id = (request.message_id or "").removeprefix("slack-")
            first_send.setdefault(turn_id, request.at_us)
        by_session: dict[str, list[str]] = defaultdict(list)
        for turn_id in first_send:
            if turn_id in session_of:
                by_session[session_of[turn_id]].append(turn_id)
        for session_id, sent in by_session.items():
            ordered = sorted(sent, key=lambda t: first_send[t])
            for index, later in enumerate(ordered):
                for earlier in ordered[index + 1 :]:
                    # An earlier message Kourier had stored before it sent a later one.
                    if float(earlier.rsplit("-", 1)[1]) < float(later.rsplit("-", 1)[1]) and (
                        recorded_at[earlier] < claimed_at.get(later, len(self.sim.documents.writes))
                    ):
                        self.fail(
                            "S2 order",
                            f"session {session_id}: {later} was claimed and sent before "
                            f"{earlier}, which came first in Slack and was already stored",
                        )
            for before, after in pairwise(ordered):
                end = done_at.get(before)
                if end is None or end > first_send[after]:
                    self.fail(
                        "S2 one at a time",
                        f"session {session_id}: {after} was sent before {before} ended",
                    )

    # S4 ------------------------------------------------------------------------------------

    def message_ids(self) -> None:
        turn_ids = set(self.sim.turn_ids())
        for request in self.sim.agents.requests:
            if request.method not in ("SendStreamingMessage", "message/stream"):
                continue
            message_id = request.message_id or ""
            if message_id.startswith("slack-") and message_id[6:] not in turn_ids:
                self.fail("S4 messageId", f"a turn sent with messageId {message_id!r}, not its own")
            elif message_id.startswith("slack-"):
                if request.task_id:
                    self.fail(
                        "S4 taskId",
                        f"a new turn {message_id} was sent with taskId {request.task_id}",
                    )
            elif not message_id.startswith("answer-"):
                self.fail("S4 messageId", f"a send with messageId {message_id!r}")

    # S5 ------------------------------------------------------------------------------------

    def approvals(self) -> None:
        """Every tool approved in an answer was approved on its prompt by an approver's click."""
        from local.sim.people import APPROVERS

        # A click is on a prompt of its question (the action_id names it): a prompt
        # posted twice, by a carrier that died before it stored the ts and by the
        # function that took over, is the same question's.
        approved: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for click in self.sim.people.clicks:
            _prefix, key, verb, *rest = click.action_id.split(":")
            if click.user in APPROVERS and verb in ("approve", "approve_all"):
                approved[key].append((click.at_us, rest[0] if rest else "*"))
        for request in self.sim.agents.requests:
            payload = (request.metadata or {}).get(HITL) or {}
            if payload.get("type") != "tool_approval_response":
                continue
            key = (request.message_id or "").removeprefix("answer-").rsplit("-", 1)[0]
            for index, approval in enumerate(payload.get("approvals", [])):
                clicks = [at for at, tool in approved.get(key, []) if tool in ("*", str(index))]
                if approval.get("approved") is True and not any(
                    at <= request.at_us for at in clicks
                ):
                    self.fail(
                        "S5 approver",
                        f"tool {approval.get('id')} was approved in {request.message_id} "
                        "without an approver's click on its prompt",
                    )
                if approval.get("approved") is False and not approval.get("rejection_reason"):
                    self.fail("S5 reason", f"tool {approval.get('id')} denied without a reason")

    # S7 ------------------------------------------------------------------------------------

    def stops(self, turns: dict[str, list[tuple[int, str, dict[str, Any]]]]) -> None:
        from local.sim.people import APPROVERS

        told = stop_notices()
        for turn_id, writes in turns.items():
            done = [data for _at, _inv, data in writes if data.get("status") == "done"]
            if not done or done[0].get("outcome") != "stopped":
                continue
            author = writes[0][2].get("user")
            allowed = [
                press
                for press in self.sim.people.stops
                if press.turn == turn_id and (press.user in APPROVERS or press.user == author)
            ]
            if not allowed:
                self.fail("S7 stopped", f"turn {turn_id} stopped without an allowed stop")
            shown = [
                message
                for messages in self.sim.slack.channels.values()
                for message in messages
                if message.turn == turn_id and notice_text(message, told) in told
            ]
            if not shown:
                self.fail("S7 untold", f"turn {turn_id} stopped and its thread was not told")

    # S3 and S6 -------------------------------------------------------------------------------

    def thread_texts(self, turns: dict[str, list[tuple[int, str, dict[str, Any]]]]) -> None:
        slack = self.sim.slack
        sentences = known_notices()
        for ephemeral in slack.ephemerals:
            if CANARY in ephemeral.text:
                self.fail("S6 agent error shown", f"ephemeral {ephemeral.text!r}")
        by_turn: dict[str, list[SlackMessage]] = defaultdict(list)
        for messages in slack.channels.values():
            for message in messages:
                if message.user != BOT_USER:
                    continue
                slack.settle(message)
                shown = json.dumps(message.blocks) + message.text
                if CANARY in shown:
                    self.fail(
                        "S6 agent error shown", f"message {message.ts}: {message.text[:80]!r}"
                    )
                if message.turn is not None:
                    by_turn[message.turn].append(message)
        answered = self.sim.answered_turns()
        for turn_id, writes in turns.items():
            messages = by_turn.get(turn_id, [])
            notices_seen: dict[str, int] = defaultdict(int)
            reply: list[SlackMessage] = []
            for message in messages:
                notice = notice_text(message, sentences)
                if notice is not None:
                    notices_seen[notice] += 1
                    if notice not in sentences:
                        self.fail("S6 notice", f"turn {turn_id}: an unknown notice {notice!r}")
                elif is_prompt(message):
                    continue
                elif self.orphaned(turn_id, message, writes):
                    self.accept("orphan message", f"turn {turn_id}: message {message.ts}")
                else:
                    reply.append(message)
            for text, count in notices_seen.items():
                if count > 1 and text != "The request to the agent failed.":
                    self.fail("S6 notice twice", f"turn {turn_id}: {text!r} {count} times")
            done = [data for _at, _inv, data in writes if data.get("status") == "done"]
            if not done or turn_id in answered:
                continue
            self.reply_text(turn_id, done[0], reply)

    def orphaned(
        self, turn_id: str, message: SlackMessage, writes: list[tuple[int, str, dict[str, Any]]]
    ) -> bool:
        """A reply message whose writer died before any checkpoint of the turn named it.

        No later carrier can know it exists, so its text may show again in
        another message: a window the product does not close (reported, not
        failed; counted as accepted).
        """
        if self.sim.platform.outcomes.get(message.by, "ok") == "ok":
            return False
        if any(inv == message.by and data.get("status") == "done" for _, inv, data in writes):
            return False  # its writer posted it, then ended the turn (and died after that)
        return not any(message.ts in str(data.get("checkpoint") or "") for _, _, data in writes)

    def no_output_told(self, turn_id: str) -> bool:
        sentences = {"The agent finished without any output."}
        return any(
            notice_text(message, sentences) == "The agent finished without any output."
            for messages in self.sim.slack.channels.values()
            for message in messages
            if message.turn == turn_id
        )

    def accept(self, code: str, detail: str) -> None:
        """A break of the promise the product knowingly allows (counted, not failed)."""
        self.accepted.append(Violation(code, detail))

    def first_results(self, turn_id: str, cards: dict[str, list[tuple[str, str | None]]]) -> None:
        """Each step finishes at its first result: the first one the turn kept, or read.

        A carrier keeps what it read once a checkpoint holds it; but one that
        died may have shown a result it read first (or kept it otherwise), and
        "the card keeps the first" (the contract): the first result any of the
        turn's carriers read counts too. A later result is never the first.
        """
        kept = self.sim.first_results(turn_id)
        read = self.sim.first_results(turn_id, kept=False)
        for call_id, ok in kept.items():
            final = [c for c in cards.get(call_id, []) if c[1] not in CONTINUED_OUTPUTS]
            firsts = {"complete" if first else "error" for first in (ok, read.get(call_id, ok))}
            if final and final[-1][0] not in firsts:
                self.fail(
                    "S3 first result",
                    f"turn {turn_id}: step {call_id} shows {final[-1][0]}, first result ok={ok}",
                )

    def results_kept(self, turn_id: str, reply: list[SlackMessage]) -> None:
        """A step shown final keeps that state: a later result changes nothing (as Slack showed)."""
        first: dict[str, str] = {}
        for _at, call_id, status, output in sorted(
            (s for m in reply for s in m.steps_shown), key=lambda s: s[0]
        ):
            if status not in ("complete", "error") or output in CONTINUED_OUTPUTS:
                continue
            shown = first.setdefault(call_id, status)
            if status != shown:
                self.fail(
                    "S3 first result",
                    f"turn {turn_id}: step {call_id} showed {shown}, then {status}",
                )
                first[call_id] = status

    def reply_text(self, turn_id: str, done: dict[str, Any], reply: list[SlackMessage]) -> None:
        expected = self.sim.reference_text(turn_id)
        if expected is None:
            return
        shown = "".join(
            visible_text(message) for message in sorted(reply, key=lambda m: float(m.ts))
        )
        if done.get("outcome") == "completed" and not expected and not self.no_output_told(turn_id):
            self.fail(
                "S6 no output untold",
                f"turn {turn_id} completed without text and the thread was not told "
                '"The agent finished without any output."',
            )
        if done.get("outcome") in ("completed",) and shown.strip() != expected.strip():
            self.fail(
                "S3 text",
                f"turn {turn_id}: the thread shows {shown[:300]!r}, the agent's text is {expected[:300]!r}",
            )
        cards: dict[str, list[tuple[str, str | None]]] = defaultdict(list)
        for message in reply:
            for card in message.cards.values():
                if message.stream == "expired" and card.status == "in_progress":
                    self.accept("step left in a cut stream", f"turn {turn_id}: {card.id}")
                    continue
                if message.stopped_by is not None and card.status == "in_progress":
                    self.accept("step left in a stopped stream", f"turn {turn_id}: {card.id}")
                    continue
                cards[card.id].append((card.status, card.output))
            for block in message.blocks:
                if block.get("type") == "task_card":
                    cards[block["task_id"]].append((block["status"], card_output(block)))
        for call_id, shown_cards in cards.items():
            final = [c for c in shown_cards if c[1] not in CONTINUED_OUTPUTS]
            if len(final) != 1:
                self.fail("S3 step once", f"turn {turn_id}: step {call_id} shows {shown_cards}")
            if any(status in ("in_progress", "pending") for status, _ in shown_cards):
                self.fail("S3 step running", f"turn {turn_id}: step {call_id} left running")
        self.first_results(turn_id, cards)
        self.results_kept(turn_id, reply)
        # A carrier that died may have shown a result it never kept: that is a result too.
        results = self.sim.first_results(turn_id, kept=False, after_stop=True)
        waits = _step_waits_for_answer()
        for call_id, shown_cards in cards.items():
            final = [c for c in shown_cards if c[1] not in CONTINUED_OUTPUTS]
            if call_id in results or not final:
                continue
            status, output = final[-1]
            if status == "complete" and output != waits:
                self.fail(
                    "S3 step without result",
                    f"turn {turn_id}: step {call_id} had no result and shows {final[-1]}",
                )
