#!/usr/bin/env python3
"""Credential endpoints on 127.0.0.1 for the S3 credential providers' tests, in front of a moto that checks
every signature.

Starts moto's server with IAM authentication on (every request must be signed by a key moto's IAM knows, with a
policy that allows it), makes a bucket `creds`, a role `uploader` for web identities, and an admin user for this
script's own calls; then serves, on a second port, the two protocols an SDK fetches credentials with:

    GET  /ID/LIFETIME/container                            the container endpoint (ECS, EKS Pod Identity): needs
                                                            `Authorization: container-token`
    PUT  /ID/LIFETIME/latest/api/token                     IMDSv2's session token (needs the TTL header)
    GET  /ID/LIFETIME/latest/meta-data/iam/security-credentials/[ROLE]
                                                            the role, then its credentials, with the token only
    GET  /ID/LIFETIME/redirect                             302 to the container endpoint (which must not be taken)
    GET  /ID/LIFETIME/trickle                              200 for 1,000 bytes, then a byte each 0.1 s (at most 1,200: 120 s)
    PUT  /ID/LIFETIME/moved/latest/api/token               IMDSv2's session token, as above
    GET  /ID/LIFETIME/moved/latest/meta-data/...           307 to the same path on another origin (localhost),
                                                            which counts `captured` and a token it was sent
    POST /advance/ID/SECONDS                               moves ID's clock on: its keys that expire by then are
                                                            deleted now (JSON: what ID's requests did)
    GET  /stats/ID                                         what ID's requests did (JSON)
    GET  /object/BUCKET/KEY                                an object's size, read with the admin key (JSON)

Each credentials answer is a new IAM user's new access key, valid for LIFETIME seconds on ID's clock: its
`Expiration` says so, and once the clock has passed it the key is deleted from moto's IAM, so a request signed with
it later is refused (403 InvalidAccessKeyId) as AWS refuses expired credentials. ID's clock is the test's, not this
machine's: it starts at 0 and moves only when the test advances it, so a busy machine cannot expire a key early or
late. `Expiration` is now (real) plus the clock's reading plus LIFETIME: the test's cache reads the time as now
plus the same reading. STS's AssumeRoleWithWebIdentity is left unsigned, as AWS
takes it. Prints one line of JSON (`s3`, `creds`, `bucket`, `role`) and serves until its input closes.
"""
import json
import sys
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
from moto import settings
from moto.core import DEFAULT_ACCOUNT_ID
from moto.iam.models import iam_backends
from moto.server import ThreadedMotoServer
from moto.sts.responses import TokenResponse

ALLOW_ALL = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]})
TRUST = json.dumps({"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Principal": {"Federated": "test"}, "Action": "sts:AssumeRoleWithWebIdentity"}]})
CONTAINER_TOKEN = "container-token"
IMDS_TOKEN = "imds-session-token"
ROLE = "uploader-role"


class Peers:
    def __init__(self) -> None:
        self.moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.moto.start()
        self.endpoint = f"http://127.0.0.1:{self.moto._server.server_port}"
        iam = self.client("iam", "moto", "moto")
        iam.create_user(UserName="admin")
        iam.put_user_policy(UserName="admin", PolicyName="all", PolicyDocument=ALLOW_ALL)
        key = iam.create_access_key(UserName="admin")["AccessKey"]
        self.role = iam.create_role(RoleName="uploader", AssumeRolePolicyDocument=TRUST)["Role"]["Arn"]
        iam.put_role_policy(RoleName="uploader", PolicyName="all", PolicyDocument=ALLOW_ALL)
        self.client("s3", "moto", "moto").create_bucket(Bucket="creds")
        # From here on every request is checked; AssumeRoleWithWebIdentity stays unsigned, as at AWS.
        checked = TokenResponse._authenticate_and_authorize_normal_action

        def sts_check(response, *args, **kwargs):
            if response._get_action() == "AssumeRoleWithWebIdentity":
                return None
            return checked(response, *args, **kwargs)

        TokenResponse._authenticate_and_authorize_normal_action = sts_check
        settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
        self.s3 = self.client("s3", key["AccessKeyId"], key["SecretAccessKey"])
        self.lock = threading.Lock()
        self.users = 0
        self.stats: dict[str, dict[str, int]] = {}
        self.clocks: dict[str, int] = {}  # each test's clock, in seconds from 0
        self.keys: dict[str, list[tuple[int, str, str]]] = {}  # each test's live keys: (expires, key id, user)

    def client(self, service: str, key: str, secret: str):
        return boto3.client(service, endpoint_url=self.endpoint, region_name="us-east-1", aws_access_key_id=key,
                            aws_secret_access_key=secret)

    def count(self, test: str, what: str) -> None:
        with self.lock:
            counts = self.stats.setdefault(test, {})
            counts[what] = counts.get(what, 0) + 1

    def issue(self, test: str, lifetime: int) -> dict:
        """A new key valid for `lifetime` seconds on `test`'s clock, deleted from moto's IAM when the clock passes
        that. Made in moto's IAM directly, not through its HTTP API, so that a busy moto does not slow the test."""
        iam = iam_backends[DEFAULT_ACCOUNT_ID]["aws"]
        with self.lock:
            self.users += 1
            user = f"k{self.users}"
            iam.create_user(region_name="us-east-1", user_name=user)
            iam.put_user_policy(user, "all", ALLOW_ALL)
            made = iam.create_access_key(user)
            reading = self.clocks.get(test, 0)
            self.keys.setdefault(test, []).append((reading + lifetime, made.access_key_id, user))
        self.count(test, "issued")
        stamp = datetime.fromtimestamp(int(time.time()) + reading + lifetime, timezone.utc)
        return {"Code": "Success", "Type": "AWS-HMAC", "AccessKeyId": made.access_key_id,
                "SecretAccessKey": made.secret_access_key, "Token": "",
                "Expiration": stamp.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "LastUpdated": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}

    def advance(self, test: str, seconds: int) -> None:
        """Moves `test`'s clock on by `seconds`, and deletes the keys that have expired by then."""
        iam = iam_backends[DEFAULT_ACCOUNT_ID]["aws"]
        with self.lock:
            reading = self.clocks.get(test, 0) + seconds
            self.clocks[test] = reading
            live = self.keys.get(test, [])
            expired = [key for key in live if key[0] <= reading]
            self.keys[test] = [key for key in live if key[0] > reading]
            for _, key_id, user in expired:
                iam.delete_access_key(key_id, user)
        for _ in expired:
            self.count(test, "revoked")


def handler(peers: Peers):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def answer(self, status: int, body, kind: str = "application/json") -> None:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def route(self):
            parts = self.path.split("/", 3)  # "", ID, LIFETIME, rest
            if len(parts) < 4 or not parts[2].isdigit():
                return None
            return parts[1], int(parts[2]), "/" + parts[3]

        def do_POST(self) -> None:
            parts = self.path.split("/")  # "", "advance", ID, SECONDS
            if len(parts) != 4 or parts[1] != "advance" or not parts[3].isdigit():
                return self.answer(404, {"error": "no such route"})
            peers.advance(parts[2], int(parts[3]))
            with peers.lock:
                return self.answer(200, dict(peers.stats.get(parts[2], {})))

        def do_PUT(self) -> None:
            route = self.route()
            if route and route[2] in ("/latest/api/token", "/moved/latest/api/token") \
                    and self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
                peers.count(route[0], "imds-token")
                return self.answer(200, IMDS_TOKEN, "text/plain")
            self.answer(400, {"error": "bad token request"})

        def do_GET(self) -> None:
            if self.path.startswith("/stats/"):
                with peers.lock:
                    return self.answer(200, dict(peers.stats.get(self.path[len("/stats/"):], {})))
            if self.path.startswith("/object/"):
                _, _, bucket, key = self.path.split("/", 3)
                head = peers.s3.head_object(Bucket=bucket, Key=key)
                return self.answer(200, {"size": head["ContentLength"]})
            route = self.route()
            if route is None:
                return self.answer(404, {"error": "no such route"})
            test, lifetime, rest = route
            if rest == "/redirect":
                self.send_response(302)
                self.send_header("Location", f"/{test}/{lifetime}/container")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            if rest == "/trickle":
                peers.count(test, "trickle")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "1000")
                self.end_headers()
                self.wfile.flush()
                for _ in range(1200):
                    try:
                        self.wfile.write(b" ")
                        self.wfile.flush()
                    except OSError:
                        return None
                    peers.count(test, "trickled")
                    time.sleep(0.1)
                return None
            if rest.startswith("/moved/"):
                if self.headers.get("Host", "").startswith("localhost"):
                    peers.count(test, "captured")
                    if self.headers.get("X-aws-ec2-metadata-token"):
                        peers.count(test, "token-captured")
                    return self.answer(200, ROLE + "\n", "text/plain")
                self.send_response(307)
                self.send_header("Location", f"http://localhost:{self.server.server_port}{self.path}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            if rest == "/container":
                if self.headers.get("Authorization") != CONTAINER_TOKEN:
                    peers.count(test, "refused")
                    return self.answer(401, {"Code": "Unauthorized", "Message": "wrong authorization token"})
                peers.count(test, "container")
                return self.answer(200, peers.issue(test, lifetime))
            if rest.startswith("/latest/meta-data/iam/security-credentials/"):
                if self.headers.get("X-aws-ec2-metadata-token") != IMDS_TOKEN:
                    peers.count(test, "refused")
                    return self.answer(401, "", "text/plain")
                role = rest[len("/latest/meta-data/iam/security-credentials/"):]
                if role == "":
                    return self.answer(200, ROLE + "\n", "text/plain")
                if role != ROLE:
                    return self.answer(404, "", "text/plain")
                peers.count(test, "imds")
                return self.answer(200, peers.issue(test, lifetime))
            self.answer(404, {"error": "no such route"})

    return Handler


def main() -> int:
    peers = Peers()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(peers))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps({"s3": peers.endpoint, "creds": f"http://127.0.0.1:{server.server_port}", "bucket": "creds",
                      "role": peers.role}), flush=True)
    sys.stdin.read()
    server.shutdown()
    peers.moto.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
