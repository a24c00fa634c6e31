#!/usr/bin/env python3
"""Holds every packet of one netfilter queue for a fixed time, then accepts it: tc netem's `delay`
for kernels without sch_netem. Talks the nfnetlink_queue protocol over a raw netlink socket (the
standard library only). Run inside the namespace whose iptables rules send packets to the queue:

    nfqueue-delay.py <queue-num> <delay-ms>

Packets leave in the order they came (one constant delay), so TCP sees latency, not reordering.
Ends on SIGTERM; with `--queue-bypass` on the rules, packets flow undelayed once it is gone.
"""
import collections
import select
import signal
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_VERDICT, NFQNL_MSG_CONFIG = 0, 1, 2
NFQA_CFG_CMD, NFQA_CFG_PARAMS = 1, 2
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NFQA_PACKET_HDR = 1
NFQA_VERDICT_HDR = 2
NLM_F_REQUEST = 1
NF_ACCEPT = 1
NLMSG_ERROR = 2


def attr(kind, payload):
    length = 4 + len(payload)
    return struct.pack('=HH', length, kind) + payload + b'\0' * ((4 - length % 4) % 4)


def message(msg_type, queue, attrs, seq=0):
    body = struct.pack('=BBH', socket.AF_UNSPEC, 0, socket.htons(queue)) + b''.join(attrs)
    header = struct.pack('=IHHII', 16 + len(body), (NFNL_SUBSYS_QUEUE << 8) | msg_type, NLM_F_REQUEST, seq, 0)
    return header + body


def packet_ids(data):
    """The packet ids of every NFQNL_MSG_PACKET in one netlink datagram."""
    offset = 0
    while offset + 16 <= len(data):
        length, msg_type = struct.unpack_from('=IH', data, offset)
        if length < 16:
            return
        if msg_type == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
            a = offset + 20  # nlmsghdr (16) + nfgenmsg (4)
            while a + 4 <= offset + length:
                alen, akind = struct.unpack_from('=HH', data, a)
                if alen < 4:
                    break
                if akind & 0x7FFF == NFQA_PACKET_HDR:
                    yield struct.unpack_from('>I', data, a + 4)[0]
                a += (alen + 3) & ~3
        offset += (length + 3) & ~3


def main():
    queue, delay = int(sys.argv[1]), int(sys.argv[2]) / 1000.0
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.bind((0, 0))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.send(message(NFQNL_MSG_CONFIG, queue, [attr(NFQA_CFG_CMD, struct.pack('>BBH', NFQNL_CFG_CMD_BIND, 0, 0))]))
    sock.send(message(NFQNL_MSG_CONFIG, queue, [attr(NFQA_CFG_PARAMS, struct.pack('>IB', 0, NFQNL_COPY_META))]))
    held = collections.deque()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print('bound', flush=True)
    while True:
        now = time.monotonic()
        while held and held[0][0] <= now:
            _, packet_id = held.popleft()
            sock.send(message(NFQNL_MSG_VERDICT, queue, [attr(NFQA_VERDICT_HDR, struct.pack('>II', NF_ACCEPT, packet_id))]))
        timeout = max(0.0, held[0][0] - now) if held else 1.0
        readable, _, _ = select.select([sock], [], [], timeout)
        if readable:
            data = sock.recv(1 << 16)
            release = time.monotonic() + delay
            for packet_id in packet_ids(data):
                held.append((release, packet_id))


if __name__ == '__main__':
    main()
