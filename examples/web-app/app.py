"""The main of the web-app example: a web app that drains on SIGTERM."""
import http.server
import signal
import sys
import threading

port = int(sys.argv[1])


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"ok\n" if self.path == "/healthz" else b"hello from the app\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
# SIGTERM (podinit's stop) and SIGINT (Ctrl-C at a terminal) both drain and
# stop the server, so either ends in a clean exit 0.
for sig in (signal.SIGTERM, signal.SIGINT):
    signal.signal(sig, lambda *_: threading.Thread(target=server.shutdown).start())
print("app on 127.0.0.1:%d" % port, flush=True)
server.serve_forever()
print("app drained and stopped", flush=True)
