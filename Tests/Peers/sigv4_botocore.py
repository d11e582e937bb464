#!/usr/bin/env python3
"""Signs requests with botocore's S3SigV4Auth, for the tests that compare the Swift signer with it.

Reads a JSON list of requests from stdin, each {"method", "url" (its path already encoded, as botocore's S3
client sends it), "headers": [[name, value]], "body_hex", "access", "secret", "token" (or null), "region",
"timestamp" (seconds since 1970)}, and prints a JSON list of the Authorization header botocore gives each.
"""
import datetime
import json
import sys

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials


def sign(request: dict) -> str:
    moment = datetime.datetime.fromtimestamp(request["timestamp"], tz=datetime.timezone.utc)
    botocore.auth.get_current_datetime = lambda *args, **kwargs: moment.replace(tzinfo=None)
    aws = AWSRequest(method=request["method"], url=request["url"], data=bytes.fromhex(request["body_hex"]))
    for name, value in request["headers"]:
        aws.headers[name] = value
    credentials = Credentials(request["access"], request["secret"], request["token"])
    botocore.auth.S3SigV4Auth(credentials, "s3", request["region"]).add_auth(aws)
    return aws.headers["Authorization"]


print(json.dumps([sign(request) for request in json.load(sys.stdin)]))
