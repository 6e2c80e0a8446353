"""The sidecar of the batch-job example: a tiny HTTP API that drains on SIGTERM."""
import http.server
import signal
import sys
import threading
import time

port = int(sys.argv[1])
greeting = sys.argv[2]  # the file the init task wrote
time.sleep(0.5)  # a slow start, so that the startup probe has something to wait for


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/healthz":
            body = b"ok\n"
        else:
            with open(greeting, "rb") as f:
                body = b"api says: " + f.read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        print("request:", fmt % args, flush=True)


server = http.server.HTTPServer(("127.0.0.1", port), Handler)


def stop(signum, frame):
    print("got SIGTERM, shutting down", flush=True)
    threading.Thread(target=server.shutdown).start()


signal.signal(signal.SIGTERM, stop)
print(f"listening on 127.0.0.1:{port}", flush=True)
server.serve_forever()
print("stopped", flush=True)
