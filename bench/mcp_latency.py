"""Latency of ``cq mcp``: the first and the tenth ``search`` call, next to one-shot ``cq search``
and ``rg --json -w`` on the same query and corpus, same run.

Speaks raw JSON-RPC lines to one ``cq mcp`` process (so the timings are the server's, not a
client library's), calls the same search ``--calls`` times, prints each call's round trip, and
writes the wire transcript of the first call (request and response) to ``--transcript``.

    python -m bench.mcp_latency                        # 'register' on the stdlib dir, 10 calls
    python -m bench.mcp_latency -q __init__ --transcript /tmp/mcp.jsonl
    python -m bench.mcp_latency --filled-cache         # the cache dir already holds the corpus
    python -m bench.mcp_latency --cancel 5 -q self --limit 0   # cancel-to-stop latency

``--cancel N`` measures instead how fast a cancelled search stops: N times, a fresh server on
an empty cache starts the search, the client cancels it after ``--cancel-after`` seconds, and
the time until the server's ``stats`` count it as stopped is printed, with whether it stopped
at a checkpoint or had to be killed (the server's grace period is
``cq.agent.workers.CANCEL_GRACE_SECONDS``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from bench._common import cq_command, median, rg_binary, scratch_dir, stdlib_dir, time_command


class RawSession:
    """One ``cq mcp`` subprocess and a line-based JSON-RPC conversation with it."""

    def __init__(self, root: str, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [*cq_command(), "mcp", "--root", root],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, **env},
        )
        self.next_id = 0
        self.seen: set[object] = set()  # ids of the responses read so far

    def request(self, method: str, params: dict) -> tuple[str, str, float]:
        """Send one request; return (request line, response line, seconds)."""
        self.next_id += 1
        line = json.dumps(
            {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        )
        start = time.perf_counter()
        self.send(line)
        while True:
            reply = self.proc.stdout.readline()  # type: ignore[union-attr]
            if not reply:
                raise SystemExit("cq mcp exited early")
            self.seen.add(json.loads(reply).get("id"))
            if json.loads(reply).get("id") == self.next_id:
                return line, reply.rstrip("\n"), time.perf_counter() - start

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]

    def close(self) -> int:
        self.proc.stdin.close()  # type: ignore[union-attr]
        return self.proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-q", "--query", default="register")
    parser.add_argument("--root", default=stdlib_dir())
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--format", choices=("md", "json"), default="md")
    parser.add_argument("--limit", type=int, default=30, help="the tool's limit argument")
    parser.add_argument("--transcript", help="write the first call's request and response here")
    parser.add_argument("--cancel", type=int, default=0, metavar="N", help="see above")
    parser.add_argument("--cancel-after", type=float, default=0.5, metavar="SECONDS")
    parser.add_argument(
        "--filled-cache",
        action="store_true",
        help="fill the cache dir with one `cq search` first (a user who searched before)",
    )
    args = parser.parse_args()
    if args.cancel:
        measure_cancel(args)
        return
    with scratch_dir() as cache:
        env = {"CQ_CACHE_DIR": cache}  # a fresh cache dir, as for a new user
        if args.filled_cache:
            time_command([*cq_command(), "search", args.query, "--root", args.root], env)
        run(args, env)


def start(args: argparse.Namespace, env: dict[str, str]) -> RawSession:
    session = RawSession(args.root, env)
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    }
    session.request("initialize", init)
    session.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    return session


def measure_cancel(args: argparse.Namespace) -> None:
    print(f"corpus: {args.root}  query: {args.query!r}  limit: {args.limit}  cache: empty")
    print(f"cancelled {args.cancel_after} s after the call")
    stops = []
    for n in range(1, args.cancel + 1):
        with scratch_dir() as cache:
            session = start(args, {"CQ_CACHE_DIR": cache})
            arguments = {"query": args.query, "limit": args.limit}
            call = {"name": "search", "arguments": arguments}
            session.next_id += 1
            rid = session.next_id
            message = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": call}
            session.send(json.dumps(message))
            time.sleep(args.cancel_after)
            cancel = {"requestId": rid, "reason": "bench"}
            note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}
            session.send(json.dumps(note))
            cancelled = time.perf_counter()
            server: dict[str, int] = {}
            while rid not in session.seen:  # answered: it finished before the cancel arrived
                _, reply, _ = session.request("tools/call", {"name": "stats", "arguments": {}})
                server = json.loads(json.loads(reply)["result"]["content"][0]["text"])["server"]
                if server["stopped_early"]:
                    break
                server = {}
                time.sleep(0.01)
            stopped = time.perf_counter() - cancelled
            how = "killed" if server.get("killed") else "checkpoint" if server else ""
            how = "" if rid in session.seen else how
            print(f"run {n}: {how or 'finished first'}  {stopped:.3f} s after the cancel")
            if how:
                stops.append(stopped)
            session.close()
    if stops:
        print(f"cancel to stop: median {median(stops):.3f} s, max {max(stops):.3f} s")


def run(args: argparse.Namespace, env: dict[str, str]) -> None:
    cache = "filled by one cq search" if args.filled_cache else "empty"
    print(f"corpus: {args.root}  query: {args.query!r}  format: {args.format}  cache: {cache}")
    print(f"limit: {args.limit}")
    started = time.perf_counter()
    session = start(args, env)
    print(f"server start to initialize reply: {time.perf_counter() - started:.3f} s")
    arguments = {"query": args.query, "format": args.format, "limit": args.limit}
    call = {"name": "search", "arguments": arguments}
    times = []
    for n in range(1, args.calls + 1):
        request, response, seconds = session.request("tools/call", call)
        times.append(seconds)
        result = json.loads(response)["result"]
        size = sum(len(block["text"]) for block in result["content"])
        print(f"call {n:>2}: {seconds:.3f} s  isError={result.get('isError', False)}  {size} chars")
        if n == 1 and args.transcript:
            with open(args.transcript, "w", encoding="utf-8") as out:
                out.write(request + "\n" + response + "\n")
            print(f"transcript of call 1 written to {args.transcript}")
    print(f"server exit code after stdin EOF: {session.close()}")
    cli = [time_command([*cq_command(), "search", args.query, "--root", args.root], env).seconds]
    cli += [
        time_command([*cq_command(), "search", args.query, "--root", args.root], env).seconds
        for _ in range(2)
    ]
    rg = [
        time_command([rg_binary(), "--json", "-w", "-e", args.query, args.root]).seconds
        for _ in range(3)
    ]
    print(
        f"first call {times[0]:.3f} s, call {len(times)} {times[-1]:.3f} s, "
        f"median of calls 2..{len(times)} {median(times[1:]):.3f} s"
    )
    rg_s = median(rg)
    print(f"one-shot `cq search` median of 3: {median(cli):.3f} s;  rg --json -w: {rg_s:.3f} s")
    print(
        f"ratio to rg: first call {times[0] / rg_s:.1f}x, call {len(times)} {times[-1] / rg_s:.1f}x"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
