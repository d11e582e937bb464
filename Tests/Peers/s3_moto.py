#!/usr/bin/env python3
"""A local S3 endpoint (moto) for the S3 store's tests.

Starts moto's server on 127.0.0.1 on a free port, creates the buckets named on the command line, prints the
port on one line, and serves until its standard input closes (the test process ending closes it too,
so no server outlives its tests).

    s3_moto.py BUCKET...
"""
import sys

import boto3
from moto.server import ThreadedMotoServer


def main() -> int:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{server._server.server_port}"
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="moto",
                      aws_secret_access_key="moto")
    for bucket in sys.argv[1:]:
        s3.create_bucket(Bucket=bucket)
    print(server._server.server_port, flush=True)
    sys.stdin.read()
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
