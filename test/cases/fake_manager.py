#!/usr/bin/env python3
"""A stand-in controller manager for the runner's own tests (not the product).

Serves what reconcile-cases expects of a manager started with --manager CMD:
/readyz and /healthz on 127.0.0.1:$GR_HEALTH_PORT, and /metrics on
127.0.0.1:$GR_METRICS_PORT exposing, for every served pod log
$GR_POD_LOGS_DIR/<namespace>/<pod>.txt, the metrics
gr_fake_pod_log_lines{namespace,pod} and gr_fake_pod_log_bytes{namespace,pod}.
It also checks that KUBECONFIG names a readable file. Stops on SIGTERM.
"""
import http.server
import os
import signal
import sys
import threading


def metrics_text():
    root = os.environ["GR_POD_LOGS_DIR"]
    out = ["# TYPE gr_fake_pod_log_lines gauge", "# TYPE gr_fake_pod_log_bytes gauge"]
    for ns in sorted(os.listdir(root)):
        d = os.path.join(root, ns)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if not f.endswith(".txt"):
                continue
            with open(os.path.join(d, f), "rb") as fh:
                data = fh.read()
            pod = f[:-4]
            out.append('gr_fake_pod_log_lines{namespace="%s",pod="%s"} %d' % (ns, pod, data.count(b"\n")))
            out.append('gr_fake_pod_log_bytes{namespace="%s",pod="%s"} %d' % (ns, pod, len(data)))
    out.append('gr_other_metric{namespace="x"} 1')
    return "\n".join(out) + "\n"


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path in ("/readyz", "/healthz"):
            body = b"ok"
        elif self.path == "/metrics":
            body = metrics_text().encode()
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        pass


def main():
    with open(os.environ["KUBECONFIG"]):
        pass
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ[v])), Handler)
               for v in ("GR_HEALTH_PORT", "GR_METRICS_PORT")]
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()
    sys.exit(0)


if __name__ == "__main__":
    main()
