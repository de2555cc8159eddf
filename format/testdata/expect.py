#!/usr/bin/env python3
"""Compute the per-file expectations of format/corpus_test.go.

This is a second, independent implementation of the reading rules the Go
readers document (live context, merging of split records, Synthetic and
Summary marks, records), written over the raw files with nothing but the
standard library. Its output is the `corpusExpect` table; regenerate with

    python3 format/testdata/expect.py > /tmp/table.go

It reads the transcripts of the shared corpus, which is not part of this
repository: $COMPACT_CORPUS/transcripts, else ../shared/corpus/transcripts
(both relative to the repository's root).

and compare by hand: a difference means one of the two implementations is
wrong, and the test says which file and which figure.
"""
import json
import os
import re
import sys

def corpus_transcripts():
    """The shared corpus's transcripts directory, found as the Go tests
    find it (package internal/corpus): $COMPACT_CORPUS, else
    ../shared/corpus, relative to the module root."""
    root = os.path.dirname(os.path.abspath(__file__))
    while not os.path.exists(os.path.join(root, "go.mod")):
        parent = os.path.dirname(root)
        if parent == root:
            sys.exit("expect.py: no go.mod above " + os.path.abspath(__file__))
        root = parent
    corpus = os.path.join(root, os.environ.get("COMPACT_CORPUS") or "../shared/corpus")
    d = os.path.join(corpus, "transcripts")
    if not os.path.isdir(d):
        sys.exit("expect.py: no shared corpus at %s (put it at ../shared/corpus beside the repository, or set COMPACT_CORPUS)" % corpus)
    return d


TRANSCRIPTS = corpus_transcripts() if __name__ == "__main__" else None

HANDOFF = "<<<compact:handoff>>>"


class Msg:
    def __init__(self, role, parts, records=1):
        self.role = role
        self.parts = parts  # list of (kind, value): text/thinking/image/call/result
        self.tool_call_ids = []
        self.synthetic = False
        self.summary = False
        self.records = records

    def text(self):
        return "\n".join(v for k, v in self.parts if k == "text" and v)

    def calls(self):
        return [v for k, v in self.parts if k == "call"]

    def result_ids(self):
        ids = []
        for i in self.tool_call_ids:
            if i not in ids:
                ids.append(i)
        for k, v in self.parts:
            if k == "result" and v not in ids:
                ids.append(v)
        return ids

    def is_ask(self):
        return (self.role == "user" and not self.synthetic and not self.summary
                and not self.result_ids() and self.text().strip() != "")


def mark_handoff(m):
    if m.role == "user" and m.text().lstrip(" \t\r\n").startswith(HANDOFF):
        m.summary, m.synthetic = True, False


# ---------------------------------------------------------------- Claude Code
# The harness markers every reader shares (format/tags.go harnessMarkers):
# (prefix, unless) - text opening with prefix is the harness's, unless it
# also holds the second phrase.
HARNESS = [(p, None) for p in [
    "<command-name>", "<command-message>", "<command-args>", "<command-contents>",
    "<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>",
    "<bash-input>", "<bash-stdout>", "<bash-stderr>", "<user-prompt-submit-hook>", "Caveat: ",
    "[Request interrupted by user",
    "<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<turn_aborted>",
    "<user_shell_command>",
    "This is the Gemini CLI. We are setting up the context for our chat.",
    "<returncode>", "Please always provide EXACTLY ONE action in triple backticks", "The last command <command>",
]] + [("# Context from my IDE setup:", "## My request for Codex:")]


def harness_text(t):
    t = t.strip()
    for prefix, unless in HARNESS:
        if t.startswith(prefix):
            return unless is None or unless not in t
    return only_reminders(t)


def only_reminders(s):
    s = s.strip()
    if not s:
        return False
    return re.fullmatch(r"(\s*<system-reminder>.*?</system-reminder>\s*)+", s, re.S) is not None


def cc_harness(parts):
    texts = [v.strip() for k, v in parts if k == "text" and v.strip()]
    if not texts:
        return False
    return all(harness_text(t) for t in texts)


def cc_parts(content):
    if isinstance(content, str):
        return [("text", content)]
    if not isinstance(content, list):
        return None
    parts = []
    for b in content:
        if isinstance(b, str):
            parts.append(("text", b))
            continue
        if not isinstance(b, dict):
            return None
        t = b.get("type")
        if t == "text":
            parts.append(("text", b.get("text", "")))
        elif t in ("thinking", "redacted_thinking"):
            parts.append(("thinking", b.get("thinking", "")))
        elif t in ("tool_use", "server_tool_use"):
            parts.append(("call", (b.get("id", ""), b.get("name", ""), b.get("input", {}))))
        elif t == "tool_result":
            parts.append(("result", b.get("tool_use_id", "")))
        elif t == "image":
            parts.append(("image", ""))
    return parts


def read_claude(records):
    items = []  # ("msg", Msg, msgid) or ("rec", type, marker)
    boundary, last_summary = -1, -1
    open_at = -1   # index in items of the assistant message whose records may go on
    pending = []   # metadata records read since; they join it if it goes on
    uuids = set()

    def close():
        nonlocal open_at
        items.extend(pending)
        pending.clear()
        open_at = -1

    def rec(typ, marker=False):
        item = ("rec", typ, marker)
        if open_at >= 0 and not marker:
            pending.append(item)
        else:
            items.append(item)

    for r in records:
        if not isinstance(r, dict):
            rec("unknown")
            continue
        typ = r.get("type")
        msg = r.get("message")
        conversation = typ in ("user", "assistant") or (typ == "summary" and isinstance(msg, dict))
        if conversation and r.get("uuid") and r.get("uuid") in uuids and r.get("isSidechain") is not True:
            rec("duplicate")
            continue
        if r.get("isSidechain") is True:
            rec("sidechain")
            continue
        if conversation:
            content = msg.get("content") if isinstance(msg, dict) else None
            if content is None:
                rec("invalid")
                continue
            parts = cc_parts(content)
            if parts is None:
                raise ValueError("a message content of the wrong type")
            if r.get("uuid"):
                uuids.add(r["uuid"])
            role = "assistant" if typ == "assistant" or msg.get("role") == "assistant" else "user"
            mid = msg.get("id") if role == "assistant" else None
            if role == "assistant" and mid and open_at >= 0 and items[open_at][2] == mid:
                m = items[open_at][1]
                m.records += len(pending) + 1
                pending.clear()
                m.parts += parts
                continue
            close()
            m = Msg(role, parts)
            if role == "user":
                m.summary = bool(r.get("isCompactSummary")) or typ == "summary"
                m.synthetic = not m.summary and (bool(r.get("isMeta")) or cc_harness(parts))
                mark_handoff(m)
                if m.summary and r.get("isCompactSummary"):
                    last_summary = len(items)
            if role == "assistant" and mid:
                open_at = len(items)
            items.append(("msg", m, mid))
        elif typ == "system":
            sub = r.get("subtype") or "system"
            close()
            if sub == "compact_boundary":
                boundary = len(items)
            rec(sub, sub == "compact_boundary")
        elif typ == "summary":
            close()
            rec("summary", True)
        elif not typ:
            rec("unknown")
        else:
            rec(typ)
    close()
    reset = boundary if boundary >= 0 else last_summary
    msgs, recs = [], []
    for i, it in enumerate(items):
        if it[0] == "rec":
            recs.append((it[1], it[2]))
        elif i < reset:
            recs += [("demoted", False)] * it[1].records
        else:
            msgs.append(it[1])
    return msgs, recs


def json_records(raw):
    """The records of a JSON-lines file; a line holding several records with
    no newline between them gives each."""
    dec = json.JSONDecoder()
    out = []
    for line in raw.split("\n"):  # not splitlines: U+2028 and \x1e sit inside strings
        line = line.strip()
        i = 0
        while i < len(line):
            v, j = dec.raw_decode(line, i)
            out.append(v)
            i = j
            while i < len(line) and line[i] in " \t":
                i += 1
    return out


# ---------------------------------------------------------------------- Codex
CODEX_PREFIX = "Another language model started to solve this problem and produced a summary of its thinking process."


def codex_injected(text):
    return harness_text(text)


def codex_item(it):
    t = it.get("type")
    if t == "message":
        parts = []
        c = it.get("content")
        if isinstance(c, str):
            parts.append(("text", c))
        for ci in c if isinstance(c, list) else []:
            if ci.get("type") in ("input_text", "output_text", "text"):
                parts.append(("text", ci.get("text", "")))
            elif ci.get("type") == "refusal":
                parts.append(("text", ci.get("refusal", "")))
            elif ci.get("type") == "input_image":
                parts.append(("image", ""))
        return it.get("role") or "assistant", parts
    if t == "reasoning":
        parts = [("thinking", s.get("text", "")) for s in (it.get("summary") or [])]
        parts += [("thinking", s.get("text", "")) for s in (it.get("content") or [])]
        return "assistant", parts or [("thinking", "")]
    if t == "function_call":
        a = it.get("arguments")
        try:
            args = json.loads(a) if isinstance(a, str) else a
        except ValueError:
            args = a
        return "assistant", [("call", (it.get("call_id", ""), it.get("name", ""), args))]
    if t == "custom_tool_call":
        return "assistant", [("call", (it.get("call_id", ""), it.get("name", ""), it.get("input")))]
    if t == "local_shell_call":
        return "assistant", [("call", (it.get("call_id") or it.get("id", ""), "local_shell", it.get("action")))]
    if t == "web_search_call":
        return "assistant", [("call", (it.get("id") or it.get("call_id") or "WEB", "web_search", it.get("action"))),
                             ("result", it.get("id") or it.get("call_id") or "WEB")]
    if t in ("compaction", "compaction_summary"):
        return "user", [("opaque", "")]
    if t in ("function_call_output", "custom_tool_call_output"):
        return "tool", [("text", "")]
    return None, None


def read_codex(lines):
    entries = []  # dict(kind, ...)
    summaries = set()
    web = [0]

    def last_open():
        # The assistant message still open, looking past event lines.
        for e in reversed(entries):
            if "rec" in e:
                if e.get("event"):
                    continue
                return None
            return e if e.get("open") else None
        return None

    def add_item(it, inner):
        role, parts = codex_item(it)
        if role is None:
            return False
        if it.get("type") == "web_search_call" and not (it.get("id") or it.get("call_id")):
            web[0] += 1
            parts = [("call", ("WEB%d" % web[0],) + parts[0][1][1:]), ("result", "WEB%d" % web[0])]
        o = last_open()
        if role == "assistant" and o is not None and o["inner"] == inner:
            # Event lines between the items of one turn join it.
            while "rec" in entries[-1]:
                entries.pop()
                o["msg"].records += 1
            o["msg"].parts += parts
            o["msg"].records += 1
            return True
        for e in entries:
            e["open"] = False
        m = Msg(role, parts)
        if role == "tool":
            m.tool_call_ids = [it.get("call_id", "")]
        elif role == "user":
            t = m.text()
            m.summary = t.startswith(CODEX_PREFIX) or t in summaries or parts == [("opaque", "")]
            m.synthetic = not m.summary and codex_injected(t)
            mark_handoff(m)
        entries.append({"msg": m, "open": role == "assistant", "inner": inner})
        return True

    def close():
        for e in entries:
            e["open"] = False

    for line in lines:
        if not isinstance(line, dict):
            close()
            entries.append({"rec": "unknown"})
            continue
        typ, p = line.get("type"), line.get("payload")
        if typ == "response_item":
            if not (isinstance(p, dict) and add_item(p, False)):
                close()
                entries.append({"rec": "response_item"})
        elif typ == "event_msg":
            entries.append({"rec": "event_msg", "event": True,
                            "marker": isinstance(p, dict) and p.get("type") == "context_compacted"})
        elif typ == "compacted":
            close()
            if p.get("message") or p.get("replacement_history") is None:
                summaries.add(p.get("message") or "(no summary available)")
            if p.get("replacement_history") is not None:
                out = []
                for e in entries:
                    if "rec" in e:
                        out.append(e)
                    elif not e["inner"]:
                        out += [{"rec": "demoted"}] * e["msg"].records
                entries[:] = out
                entries.append({"rec": "compacted", "marker": True})
                for it in p["replacement_history"]:
                    if not add_item(it, True):
                        close()
                close()
            else:
                out = []
                for e in entries:
                    if "rec" in e:
                        out.append(e)
                        continue
                    m = e["msg"]
                    if (m.role == "user" and not m.summary) or m.role in ("system", "developer"):
                        e["open"] = False
                        out.append(e)
                    elif not e["inner"]:
                        out += [{"rec": "demoted"}] * m.records
                entries[:] = out
                m = Msg("user", [("text", p.get("message") or "(no summary available)")])
                m.summary = True
                entries.append({"msg": m, "open": False, "inner": False})
        else:
            close()
            entries.append({"rec": typ or "unknown"})
    msgs = [e["msg"] for e in entries if "msg" in e]
    recs = [(e["rec"], e.get("marker", False)) for e in entries if "rec" in e]
    return msgs, recs


# ------------------------------------------------------------ OpenAI-style docs
def chat_parts(content):
    if content is None:
        return []
    if isinstance(content, str):
        return [("text", content)]
    parts = []
    for c in content:
        if c.get("type") in ("text", "input_text", "output_text"):
            parts.append(("text", c.get("text", "")))
        elif c.get("type") in ("image_url", "input_image"):
            parts.append(("image", ""))
    return parts


def chat_call(c):
    a = c.get("function", {}).get("arguments")
    try:
        args = json.loads(a) if isinstance(a, str) else a
    except ValueError:
        args = a
    return ("call", (c.get("id", ""), c.get("function", {}).get("name", ""), args))


def read_sweagent(doc):
    msgs, ask_seen = [], False
    for h in doc["history"]:
        m = Msg(h["role"], chat_parts(h.get("content")) + [chat_call(c) for c in h.get("tool_calls") or []])
        m.tool_call_ids = h.get("tool_call_ids") or []
        if m.role == "user":
            demo = h.get("is_demo") in (True, "true", "True")
            m.synthetic = demo or ask_seen
            ask_seen = ask_seen or not demo
            mark_handoff(m)
        msgs.append(m)
    return msgs, []


def read_miniswe(doc):
    msgs = []
    for h in doc["messages"] if isinstance(doc, dict) else doc:
        parts = chat_parts(h.get("content"))
        if h.get("reasoning_content"):
            parts = [("thinking", h["reasoning_content"])] + parts
        parts += [chat_call(c) for c in h.get("tool_calls") or []]
        m = Msg(h["role"], parts)
        if h.get("tool_call_id"):
            m.tool_call_ids = [h["tool_call_id"]]
        if h["role"] == "exit":
            m.role, m.synthetic = "user", True
        elif h["role"] == "user" and not m.tool_call_ids:
            m.synthetic = cc_harness(parts)
        mark_handoff(m)
        msgs.append(m)
    return msgs, []


def read_openai(doc):
    msgs = []
    if isinstance(doc, dict):
        doc = doc.get("messages") or []
    for h in doc:
        m = Msg(h["role"], chat_parts(h.get("content")) + [chat_call(c) for c in h.get("tool_calls") or []])
        if h.get("tool_call_id"):
            m.tool_call_ids = [h["tool_call_id"]]
        msgs.append(m)
    return msgs, []


def gemini_msg(g):
    parts = [("thinking", "")] * len(g.get("thoughts") or [])
    c = g.get("content")
    if isinstance(c, str) and c:
        parts.append(("text", c))
    elif isinstance(c, list):
        parts += [("text", x["text"]) for x in c if isinstance(x, dict) and x.get("text")]
    for tc in g.get("toolCalls") or []:
        parts.append(("call", (tc.get("id", ""), tc.get("name", ""), tc.get("args") or {})))
        for res in tc.get("result") or []:
            fr = res.get("functionResponse")
            if fr is not None:
                parts.append(("result", fr.get("id") or tc.get("id", "")))
    m = Msg("user" if g.get("type") == "user" else "assistant", parts)
    mark_handoff(m)
    return m


def read_gemini_lines(lines):
    """Gemini CLI's JSON-lines layout: a header, messages, $set updates; a
    message recorded again (same id) replaces the earlier version."""
    msgs, recs, by_id = [], [], {}
    for i, g in enumerate(lines):
        if "$set" in g or (i == 0 and "sessionId" in g):
            recs.append(("$set" if "$set" in g else "session", False))
            continue
        t = g.get("type")
        if t not in ("user", "gemini", "model"):
            recs.append((t or "unknown", False))
            continue
        m = gemini_msg(g)
        if g.get("id") and g["id"] in by_id:
            by_id[g["id"]].parts = m.parts
            continue
        by_id[g.get("id")] = m
        msgs.append(m)
    return msgs, recs


def read_gemini(doc):
    msgs, recs = [], []
    for g in doc["messages"]:
        t = g.get("type")
        if t not in ("user", "gemini", "model"):
            recs.append((t or "unknown", False))
            continue
        parts = [("thinking", "")] * len(g.get("thoughts") or [])
        c = g.get("content")
        if isinstance(c, str) and c:
            parts.append(("text", c))
        elif isinstance(c, list):
            parts += [("text", x["text"]) for x in c if isinstance(x, dict) and x.get("text")]
        for tc in g.get("toolCalls") or []:
            parts.append(("call", (tc.get("id", ""), tc.get("name", ""), tc.get("args") or {})))
            for res in tc.get("result") or []:
                fr = res.get("functionResponse")
                if fr is not None:
                    parts.append(("result", fr.get("id") or tc.get("id", "")))
        m = Msg("user" if t == "user" else "assistant", parts)
        mark_handoff(m)
        msgs.append(m)
    return msgs, recs


OH_SKIP_ARGS = {"id", "timestamp", "source", "message", "action", "observation", "cause", "thought",
                "tool_call_metadata", "llm_metrics", "args", "is_confirmed", "confirmation_state", "action_risk",
                "security_risk", "keep_prompt", "kernel_init_code", "hidden", "blocking", "is_input", "impl_source",
                "translated_ipython_code", "timeout"}

OH_BOOKKEEPING_OBS = ("null", "agent_state_changed", "agent_condensation_request", "user_rejected_no_content")


def read_openhands(events):
    msgs, recs = [], []
    acted = False
    open_resp = None
    pending = []  # [call_id, event_id, kind, answered]

    def text_of(e):
        a = e.get("args")
        if isinstance(a, dict) and isinstance(a.get("content"), str) and a["content"]:
            return a["content"]
        if isinstance(e.get("content"), str) and e["content"]:
            return e["content"]
        return e.get("message", "")

    def thought_of(e):
        a = e.get("args")
        if isinstance(a, dict) and a.get("thought"):
            return a["thought"]
        return e.get("thought", "")

    for i, e in enumerate(events):
        act, obs = e.get("action"), e.get("observation")
        meta = e.get("tool_call_metadata") or {}
        if act:
            if act == "message":
                role = "assistant" if e.get("source") == "agent" or (not e.get("source") and acted) else "user"
                m = Msg(role, [("text", text_of(e))])
                mark_handoff(m)
                msgs.append(m)
                open_resp = None
            elif act == "system":
                msgs.append(Msg("system", [("text", text_of(e))]))
                open_resp = None
            elif meta.get("tool_call_id"):
                acted = True
                parts = [("text", thought_of(e))] if thought_of(e) else []
                args = None
                for ch in (meta.get("model_response") or {}).get("choices", []):
                    for tc in ch.get("message", {}).get("tool_calls") or []:
                        if tc.get("id") == meta["tool_call_id"]:
                            args = chat_call(tc)[1][2]
                parts.append(("call", (meta["tool_call_id"], meta.get("function_name", ""), args)))
                rid = (meta.get("model_response") or {}).get("id")
                if rid and rid == open_resp and msgs:
                    msgs[-1].parts += parts
                    msgs[-1].records += 1
                else:
                    msgs.append(Msg("assistant", parts))
                    open_resp = rid
            elif act in ("recall", "change_agent_state", "null") or e.get("source") in ("user", "environment"):
                recs.append(("action:" + act, False))
                open_resp = None
            elif act == "finish":
                acted = True
                msgs.append(Msg("assistant", [("text", "…")]))
                open_resp = None
            else:
                acted = True
                eid = str(e["id"]) if e.get("id") is not None else str(i)
                pending.append(["oh-" + eid, eid, act, False])
                parts = [("text", thought_of(e))] if thought_of(e) else []
                src = e["args"] if isinstance(e.get("args"), dict) else e
                args = {k: v for k, v in src.items() if k not in OH_SKIP_ARGS}
                parts.append(("call", ("oh-" + eid, act, args)))
                msgs.append(Msg("assistant", parts))
                open_resp = None
        elif obs:
            open_resp = None
            if meta.get("tool_call_id"):
                m = Msg("tool", [("text", text_of(e))])
                m.tool_call_ids = [meta["tool_call_id"]]
                msgs.append(m)
                continue
            target = None
            cause = e.get("cause")
            if cause is not None:
                for p in pending:
                    if p[1] == str(cause) and not p[3]:
                        target = p
            else:
                for p in pending:
                    if not p[3] and p[2] == obs:
                        target = p
                        break
            if target:
                target[3] = True
                m = Msg("tool", [("text", text_of(e))])
                m.tool_call_ids = [target[0]]
                msgs.append(m)
            elif obs in OH_BOOKKEEPING_OBS or not text_of(e).strip():
                recs.append(("observation:" + obs, False))
            else:
                m = Msg("user", [("text", text_of(e))])
                m.synthetic = True
                msgs.append(m)
        else:
            recs.append(("unknown", False))
            open_resp = None
    return msgs, recs


def oh_v1_text(v):
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        return v.get("text") or ""
    if isinstance(v, list):
        return "\n".join(t for t in (oh_v1_text(x) for x in v) if t)
    return ""


def read_openhands_v1(events):
    """OpenHands V1 (software-agent-sdk) events: messages from
    SystemPromptEvent, MessageEvent, ActionEvent (one message per model
    response), observations as tool messages; a Condensation forgets
    events."""
    msgs, recs = [], []   # msgs: [Msg, event ids]
    open_resp = None
    for e in events:
        k = e.get("kind")
        if k == "SystemPromptEvent":
            msgs.append([Msg("system", [("text", oh_v1_text(e.get("system_prompt")))]), [e.get("id")]])
            open_resp = None
        elif k == "MessageEvent":
            lm = e.get("llm_message") or {}
            role = lm.get("role") or ("assistant" if e.get("source") == "agent" else "user")
            m = Msg(role, [("text", oh_v1_text(lm.get("content")))])
            mark_handoff(m)
            msgs.append([m, [e.get("id")]])
            open_resp = None
        elif k == "ActionEvent":
            tc = e.get("tool_call") or {}
            call = ("call", (tc.get("id") or e.get("tool_call_id", ""), tc.get("name") or e.get("tool_name", ""), None))
            rid = e.get("llm_response_id")
            if rid and rid == open_resp and msgs:
                msgs[-1][0].parts.append(call)
                msgs[-1][1].append(e.get("id"))
            else:
                msgs.append([Msg("assistant", [call]), [e.get("id")]])
                open_resp = rid
        elif k in ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation"):
            open_resp = None
            if e.get("tool_call_id"):
                m = Msg("tool", [("text", "")])
                m.tool_call_ids = [e["tool_call_id"]]
            else:
                m = Msg("user", [("text", "")])
                m.synthetic = True
            msgs.append([m, [e.get("id")]])
        elif k == "Condensation":
            open_resp = None
            gone = set(e.get("forgotten_event_ids") or [])
            kept = []
            for m, ids in msgs:
                if gone & set(ids):
                    recs += [("forgotten", False)] * len(ids)
                else:
                    kept.append([m, ids])
            msgs[:] = kept
            if e.get("summary"):
                m = Msg("user", [("text", e["summary"])])
                m.summary = True
                msgs.append([m, [e.get("id")]])
            else:
                recs.append(("Condensation", True))
        elif k == "CondensationSummaryEvent" and e.get("summary"):
            m = Msg("user", [("text", e["summary"])])
            m.summary = True
            msgs.append([m, [e.get("id")]])
            open_resp = None
        else:
            recs.append((k or "unknown", False))
            open_resp = None
    return [m for m, _ in msgs], recs


def read_openhands_any(events):
    if events and isinstance(events[0], dict) and "kind" in events[0]:
        return read_openhands_v1(events)
    return read_openhands(events)


# ---------------------------------------------------------------- --count
def sources_formats(dirs):
    """file name -> format, from the SOURCES.md tables of the corpus dirs."""
    out = {}
    for d in dirs:
        path = os.path.join(d, "SOURCES.md")
        if not os.path.exists(path):
            continue
        for line in open(path, encoding="utf-8"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) > 5 and os.path.splitext(cells[0])[1] in (".json", ".jsonl", ".traj"):
                # The format column: a format name (wild/) or a description
                # that starts with the agent's name (transcripts/).
                desc = cells[4].lower()
                for key, name in (("mini-swe-agent", "mini-swe-agent"), ("swe-agent", "swe-agent"), ("bare json array", "openai"),
                                  ("claude", "claude-code"), ("codex", "codex"), ("gemini", "gemini-cli"),
                                  ("openhands", "openhands"), ("openai", "openai")):
                    if desc.startswith(key):
                        out[cells[0]] = name
                        break
    return out


def read_file(path, fmt):
    raw = open(path, encoding="utf-8", errors="surrogateescape").read()
    raw = raw.lstrip("\ufeff")
    first = raw.lstrip()[:1]
    if fmt == "claude-code":
        try:
            return read_claude(json.loads(raw)["loglines"])  # the JSON export
        except (ValueError, KeyError, TypeError):
            return read_claude(json_records(raw))
    if fmt == "codex":
        return read_codex(json_records(raw))
    if fmt == "gemini-cli":
        try:
            return read_gemini(json.loads(raw))
        except ValueError:
            return read_gemini_lines(json_records(raw))
    if fmt == "openhands":
        if first == "[":
            return read_openhands_any(json.loads(raw))
        lines = json_records(raw)
        if "history" in lines[0]:
            msgs, recs = read_openhands_any(lines[0]["history"])
            return msgs, recs + [("instance", False)] * (len(lines) - 1)
        return read_openhands_v1(lines)
    if fmt == "swe-agent":
        return read_sweagent(json.loads(raw))
    if fmt == "mini-swe-agent":
        return read_miniswe(json.loads(raw))
    if fmt == "openai":
        return read_openai(json.loads(raw))
    raise ValueError("no rule for format " + fmt)


def count(paths):
    """Print, for each file, one JSON object with its format and what
    compact inspect --json says of it: messages, roles, tool calls and the
    call ids results answer."""
    dirs = sorted({os.path.dirname(os.path.abspath(p)) for p in paths})
    formats = sources_formats(dirs + [os.path.dirname(d) for d in dirs])
    for p in paths:
        name = os.path.basename(p)
        fmt = formats.get(name)
        if fmt is None and os.path.basename(os.path.dirname(os.path.abspath(p))) == "entire":
            fmt = "claude-code"  # wild/entire: Entire's own Claude Code sessions
        if fmt is None:
            print(json.dumps({"file": p, "error": "no format in SOURCES.md"}))
            continue
        msgs, _ = read_file(p, fmt)
        roles = {}
        for m in msgs:
            roles[m.role] = roles.get(m.role, 0) + 1
        print(json.dumps({"file": p, "format": fmt, "messages": len(msgs), "roles": roles,
                          "tool_calls": sum(len(m.calls()) for m in msgs),
                          "tool_results": sum(len(m.result_ids()) for m in msgs)}))


# --------------------------------------------------------------------- output
def orphans(msgs):
    open_calls = {}
    answered = set()
    out = []
    for i, m in enumerate(msgs):
        for c in m.calls():
            open_calls.setdefault(c[0], []).append((i, c[0]))
        for rid in m.result_ids():
            if open_calls.get(rid):
                answered.add(open_calls[rid].pop(0))
            else:
                out.append((i, "result_without_call", rid))
    for lst in open_calls.values():
        for (i, cid) in lst:
            out.append((i, "call_without_result", cid))
    out.sort(key=lambda x: x[0])
    return out


def go_str(s):
    return json.dumps(s, ensure_ascii=False)


def first_arg(args):
    if isinstance(args, dict) and args:
        k = sorted(args)[0]
        v = args[k]
        return k, v if isinstance(v, str) else json.dumps(v, separators=(",", ":"), ensure_ascii=False)
    return "", ""


def expect(name, fmt, msgs, recs):
    roles = {}
    for m in msgs:
        roles[m.role] = roles.get(m.role, 0) + 1
    calls = sum(len(m.calls()) for m in msgs)
    results = sum(len(m.result_ids()) for m in msgs)
    ask = next((m.text() for m in msgs if m.is_ask()), "")
    call = next((c for m in msgs for c in m.calls()), None)
    print("\t{")
    print("\t\tfile: %s, format: %s," % (go_str(name), fmt))
    print("\t\tmessages: %d, records: %d, markers: %d, summaries: %d, synthetic: %d," % (
        len(msgs), len(recs), sum(1 for r in recs if r[1]), sum(1 for m in msgs if m.summary),
        sum(1 for m in msgs if m.synthetic)))
    print("\t\troles: map[compact.Role]int{%s}," % ", ".join('"%s": %d' % (k, v) for k, v in sorted(roles.items())))
    print("\t\tcalls: %d, results: %d," % (calls, results))
    print("\t\torphans: []string{%s}," % ", ".join(go_str("%s %s@%d" % (k, cid, i)) for i, k, cid in orphans(msgs)))
    print("\t\task: %s," % go_str(ask[:48]))
    if call:
        k, v = first_arg(call[2])
        print("\t\tcall: %s, argKey: %s, argPrefix: %s," % (go_str(call[1]), go_str(k), go_str(v[:40])))
    print("\t},")


def main():
    files = sorted(f for f in os.listdir(TRANSCRIPTS) if os.path.splitext(f)[1] in (".json", ".jsonl", ".traj"))
    print("var corpusExpect = []corpusCase{")
    for f in files:
        path = os.path.join(TRANSCRIPTS, f)
        raw = open(path, encoding="utf-8").read()
        if f.startswith("claudecode_") and f.endswith(".jsonl"):
            recs = []
            for l in raw.splitlines():
                if l.strip():
                    recs.append(json.loads(l))
            expect(f, "ClaudeCode", *read_claude(recs))
        elif f.startswith("claudecode_"):
            expect(f, "ClaudeCode", *read_claude(json.loads(raw)["loglines"]))
        elif f.startswith("codex_"):
            expect(f, "Codex", *read_codex([json.loads(l) for l in raw.splitlines() if l.strip()]))
        elif f.startswith("sweagent_"):
            expect(f, "SWEAgent", *read_sweagent(json.loads(raw)))
        elif f == "minisweagent_github_issue.traj.json":
            expect(f, "OpenAIChat", *read_openai(json.loads(raw)))
        elif f.startswith("minisweagent_"):
            expect(f, "MiniSWEAgent", *read_miniswe(json.loads(raw)))
        elif f.startswith("gemini_"):
            expect(f, "GeminiCLI", *read_gemini(json.loads(raw)))
        elif f.startswith("openhands_") and f.endswith(".jsonl"):
            lines = [json.loads(l) for l in raw.splitlines() if l.strip()]
            msgs, recs = read_openhands(lines[0]["history"])
            expect(f, "OpenHands", msgs, recs + [("instance", False)] * (len(lines) - 1))
        elif f.startswith("openhands_"):
            expect(f, "OpenHands", *read_openhands(json.loads(raw)))
        else:
            sys.exit("no rule for " + f)
    print("}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--count":
        count(sys.argv[2:])
    else:
        main()
