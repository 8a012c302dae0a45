"""deploy/kubernetes.yaml against the real server: the probe paths are its
routes and answer, the container port is the one the server is told to use,
the HPA's metric is on /metrics, the grace period covers preStop and the
drain. Run by scripts/test_serve_clients.sh (DLRT_SERVE_URL, DLRT_BIN)."""
import json
import os
import subprocess
import urllib.request

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
URL = os.environ["DLRT_SERVE_URL"]


def docs():
    with open(os.path.join(ROOT, "deploy", "kubernetes.yaml")) as f:
        return {d["kind"]: d for d in yaml.safe_load_all(f) if d}


def get(path):
    try:
        with urllib.request.urlopen(URL + path, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_manifest_matches_the_server():
    d = docs()
    assert {"Deployment", "Service", "HorizontalPodAutoscaler"} <= set(d)
    pod = d["Deployment"]["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    args = c["args"]
    assert args[0] == "serve"
    port = int(args[args.index("--port") + 1])
    named = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert named["http"] == port
    _, doc = get("/openapi.json")
    routes = json.loads(doc)["paths"]
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        h = c[probe]["httpGet"]
        assert h["port"] in ("http", port), probe
        assert h["path"] in routes and "get" in routes[h["path"]], (probe, h["path"])
        status, _ = get(h["path"])
        assert status == 200, (probe, h["path"], status)
    svc = d["Service"]["spec"]["ports"][0]
    assert svc["targetPort"] in ("http", port)
    metric = d["HorizontalPodAutoscaler"]["spec"]["metrics"][0]["pods"]["metric"]["name"]
    _, metrics = get("/metrics")
    assert any(line.startswith(metric + " ") or line.startswith(metric + "{") for line in metrics.splitlines()), metric
    sleep = int(c["lifecycle"]["preStop"]["exec"]["command"][-1])
    assert pod["terminationGracePeriodSeconds"] > sleep + 30  # preStop + dlrt's default drain_timeout_ms
    # The environment variables it sets are dlrt settings.
    env_help = subprocess.run([os.environ["DLRT_BIN"], "--help-env"], capture_output=True, text=True).stdout
    serve_help = subprocess.run([os.environ["DLRT_BIN"], "serve", "--help"], capture_output=True, text=True).stdout
    for e in c["env"]:
        name = e["name"]
        if name.startswith("DLRT_SERVE_"):
            key = name[len("DLRT_SERVE_"):].lower().replace("_", "-")
            assert "--" + key in serve_help, name
        else:
            assert name in env_help, name
