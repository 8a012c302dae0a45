"""dlrt serve as stateless replicas: three servers on loopback behind a
round-robin client, one stopped with SIGTERM mid-load. Every request must
end in a 200 (retried on the next replica after a refused connection or a
503, both retryable), none may be lost on a connection the server accepted,
the stopped replica must exit 0 and the others carry the load. Run by
scripts/test_serve_clients.sh (DLRT_BIN, DLRT_TINY_BERT)."""
import http.client
import json
import os
import signal
import subprocess
import threading
import time

BIN = os.environ["DLRT_BIN"]
FOLDER = os.environ["DLRT_TINY_BERT"]


def start_replica(log):
    p = subprocess.Popen([BIN, "serve", "--model", FOLDER, "--port", "0", "--device", "cpu", "--threads", "1",
                          "--access-log", "false", "--drain-timeout-ms", "10000"],
                         stdout=log, stderr=subprocess.STDOUT)
    return p


def wait_ready(path, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        text = open(path).read()
        if "ready in" in text:
            return int(text.split("listening on http://")[1].split(":")[1].split(" ")[0])
        time.sleep(0.05)
    raise AssertionError("replica not ready: " + open(path).read())


def test_three_replicas_one_stopped_mid_load(tmp_path):
    logs = [open(tmp_path / f"replica{i}.out", "w+") for i in range(3)]
    procs = [start_replica(l) for l in logs]
    try:
        ports = [wait_ready(tmp_path / f"replica{i}.out") for i in range(3)]
        lock = threading.Lock()
        counts = {"ok": 0, "retried_refused": 0, "retried_503": 0, "lost": 0, "per_replica": [0, 0, 0]}
        stop_at = time.time() + 4.0
        body = json.dumps({"input": ["the cat sat on the mat.", "a big dog"]})

        def client(k):
            i = k
            while time.time() < stop_at:
                done = False
                for attempt in range(6):  # round robin, retrying on the next replica
                    r = (i + attempt) % 3
                    conn = http.client.HTTPConnection("127.0.0.1", ports[r], timeout=20)
                    try:
                        conn.connect()
                    except (ConnectionRefusedError, OSError):
                        with lock:
                            counts["retried_refused"] += 1
                        continue
                    try:
                        conn.request("POST", "/v1/embeddings", body, {"Content-Type": "application/json"})
                        resp = conn.getresponse()
                        data = resp.read()
                    except (ConnectionResetError, http.client.RemoteDisconnected, BrokenPipeError):
                        with lock:
                            counts["lost"] += 1  # accepted, then no answer
                        continue
                    finally:
                        conn.close()
                    if resp.status == 503:
                        with lock:
                            counts["retried_503"] += 1
                        continue
                    assert resp.status == 200, (resp.status, data)
                    assert len(json.loads(data)["data"]) == 2
                    with lock:
                        counts["ok"] += 1
                        counts["per_replica"][r] += 1
                    done = True
                    break
                assert done, "a request found no replica to serve it"
                i += 1

        threads = [threading.Thread(target=client, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        time.sleep(1.5)
        before = list(counts["per_replica"])
        procs[0].send_signal(signal.SIGTERM)
        for t in threads:
            t.join()
        assert procs[0].wait(timeout=30) == 0, open(tmp_path / "replica0.out").read()
        print(f"replicas: {counts['ok']} requests served ({counts['per_replica']} per replica, "
              f"{before} before the SIGTERM), {counts['retried_refused']} retried after a refused connection, "
              f"{counts['retried_503']} after a 503, {counts['lost']} lost")
        assert counts["lost"] == 0
        assert min(before) > 0  # all three served before the stop
        assert counts["per_replica"][1] > before[1] and counts["per_replica"][2] > before[2]  # the survivors carry on
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
