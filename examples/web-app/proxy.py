"""The proxy sidecar of the web-app example: forwards GETs to the app."""
import http.server
import signal
import sys
import threading
import urllib.request

port = int(sys.argv[1])
upstream = "http://127.0.0.1:%s" % open(sys.argv[2]).read().strip()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        try:
            with urllib.request.urlopen(upstream + self.path, timeout=2) as r:
                status, body = r.status, r.read()
        except Exception as e:  # the app is not there (yet, or any more)
            status, body = 502, ("bad gateway: %s\n" % e).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        print("proxied:", fmt % args, flush=True)


server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
# SIGTERM (podinit's stop) and SIGINT (Ctrl-C at a terminal) both drain and
# stop the server, so either ends in a clean exit 0.
for sig in (signal.SIGTERM, signal.SIGINT):
    signal.signal(sig, lambda *_: threading.Thread(target=server.shutdown).start())
print("proxy on 127.0.0.1:%d -> %s" % (port, upstream), flush=True)
server.serve_forever()
print("proxy stopped (after the app, as podinit orders it)", flush=True)
