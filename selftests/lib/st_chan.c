// SPDX-License-Identifier: GPL-2.0
/*
 * srnic_test: the control channel of a client and a server.
 *
 * A TCP connection (or a socketpair) carries 64-bit big-endian words:
 * parameters, barriers, the QP number, PSN, GID and MRs of each end, the
 * end-of-test counters. Every read has a time limit, and a peer that
 * failed shows as a closed connection, so neither end waits forever.
 */
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "srnic_test.h"

#define CHAN_TOKEN	0x70696e67u	/* a barrier's word */
#define CHAN_MAX_WORDS	32		/* in one st_chan_send_u64s() */
#define PEER_WORDS	(5 + 3 * ST_MAX_MRS)

/**
 * st_tcp_listen_accept() - listen on @port (IPv6 and IPv4), accept one.
 * @port: the TCP port, as text
 *
 * Return: the connected socket (TCP_NODELAY), or -1 with a diagnostic.
 */
int st_tcp_listen_accept(const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET6,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE }, *ai;
	int fd, cfd, on = 1, off = 0;

	if (getaddrinfo(NULL, port, &hints, &ai)) {
		st_diag(NULL, "bad port %s", port);
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (fd < 0) {
		freeaddrinfo(ai);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 1)) {
		st_diag(NULL, "bind/listen on port %s: %s", port,
			strerror(errno));
		freeaddrinfo(ai);
		close(fd);
		return -1;
	}
	freeaddrinfo(ai);
	st_diag(NULL, "listening on port %s", port);
	cfd = accept(fd, NULL, NULL);
	if (cfd < 0)
		st_diag(NULL, "accept: %s", strerror(errno));
	close(fd);
	if (cfd >= 0)
		setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	return cfd;
}

/**
 * st_tcp_connect() - connect to @host:@port, retrying for a while (the
 * server may start a bit later).
 * @host: name or address
 * @port: the TCP port, as text
 * @wait_s: how long to keep trying
 *
 * Return: the connected socket (TCP_NODELAY), or -1 with a diagnostic.
 */
int st_tcp_connect(const char *host, const char *port, int wait_s)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *a;
	double end = st_now_s() + wait_s;
	int fd = -1, on = 1, e;

	e = getaddrinfo(host, port, &hints, &ai);
	if (e) {
		st_diag(NULL, "%s: %s", host, gai_strerror(e));
		return -1;
	}
	while (fd < 0 && st_now_s() < end) {
		for (a = ai; a && fd < 0; a = a->ai_next) {
			fd = socket(a->ai_family, SOCK_STREAM, 0);
			if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen)) {
				close(fd);
				fd = -1;
			}
		}
		if (fd < 0)
			st_sleep_ms(200);
	}
	freeaddrinfo(ai);
	if (fd < 0)
		st_diag(NULL, "cannot connect to %s port %s", host, port);
	else
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	return fd;
}

/**
 * st_chan_close() - close the channel (the peer sees EOF at once).
 * @ch: the channel
 */
void st_chan_close(struct st_chan *ch)
{
	if (ch->fd >= 0)
		close(ch->fd);
	ch->fd = -1;
}

/**
 * st_chan_write() - send @len bytes.
 * @ch: the channel
 * @buf: the bytes
 * @len: how many
 *
 * Return: 0, or -1 with a diagnostic.
 */
int st_chan_write(struct st_chan *ch, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = send(ch->fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			st_diag(ch->who, "control channel: send: %s",
				strerror(errno));
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

/**
 * st_chan_read() - receive exactly @len bytes, waiting at most the
 * channel's wait for each piece.
 * @ch: the channel
 * @buf: where
 * @len: how many
 *
 * Return: 0, or -1 with a diagnostic (timeout, peer closed, error).
 */
int st_chan_read(struct st_chan *ch, void *buf, size_t len)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	int wait_ms = ch->wait_ms ? ch->wait_ms : ST_CHAN_WAIT_MS;
	char *p = buf;
	ssize_t n;
	int rc;

	while (len) {
		rc = poll(&pfd, 1, wait_ms);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc == 0) {
			st_diag(ch->who, "control channel: peer silent for %d s",
				wait_ms / 1000);
			return -1;
		}
		n = recv(ch->fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			st_diag(ch->who, "control channel: %s",
				n ? strerror(errno) : "peer closed (it failed?)");
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

/**
 * st_chan_send_u64s() - send @n words (at most 32).
 * @ch: the channel
 * @v: the words
 * @n: how many
 *
 * Return: 0 or -1.
 */
int st_chan_send_u64s(struct st_chan *ch, const __u64 *v, int n)
{
	__u64 w[CHAN_MAX_WORDS];
	int i;

	if (n > CHAN_MAX_WORDS)
		return -1;
	for (i = 0; i < n; i++)
		w[i] = htobe64(v[i]);
	return st_chan_write(ch, w, n * sizeof(w[0]));
}

/**
 * st_chan_recv_u64s() - receive @n words.
 * @ch: the channel
 * @v: where
 * @n: how many
 *
 * Return: 0 or -1.
 */
int st_chan_recv_u64s(struct st_chan *ch, __u64 *v, int n)
{
	int i;

	if (st_chan_read(ch, v, n * sizeof(v[0])))
		return -1;
	for (i = 0; i < n; i++)
		v[i] = be64toh(v[i]);
	return 0;
}

/**
 * st_chan_send_u64() - send one word.
 * @ch: the channel
 * @v: the word
 *
 * Return: 0 or -1.
 */
int st_chan_send_u64(struct st_chan *ch, __u64 v)
{
	return st_chan_send_u64s(ch, &v, 1);
}

/**
 * st_chan_recv_u64() - receive one word.
 * @ch: the channel
 * @v: where
 *
 * Return: 0 or -1.
 */
int st_chan_recv_u64(struct st_chan *ch, __u64 *v)
{
	return st_chan_recv_u64s(ch, v, 1);
}

/**
 * st_chan_sync() - a barrier: both ends reach it before either goes on.
 * @ch: the channel
 *
 * Return: 0, or -1 (also when the ends are out of step).
 */
int st_chan_sync(struct st_chan *ch)
{
	__u64 v;

	if (st_chan_send_u64(ch, CHAN_TOKEN) || st_chan_recv_u64(ch, &v))
		return -1;
	if (v != CHAN_TOKEN) {
		st_diag(ch->who, "control channel: out of step (got %#llx)", v);
		return -1;
	}
	return 0;
}

/**
 * st_chan_swap() - send @n words and receive the peer's @n.
 * @ch: the channel
 * @mine: this end's words
 * @theirs: the peer's (may be @mine)
 * @n: how many
 *
 * Return: 0 or -1.
 */
int st_chan_swap(struct st_chan *ch, const __u64 *mine, __u64 *theirs, int n)
{
	if (st_chan_send_u64s(ch, mine, n) || st_chan_recv_u64s(ch, theirs, n))
		return -1;
	return 0;
}

/**
 * st_peer_add_mr() - announce one more MR to the peer.
 * @pi: what this end tells the peer
 * @mr: the MR (ignored when ST_MAX_MRS are announced already)
 */
void st_peer_add_mr(struct st_peer *pi, const struct ibv_mr *mr)
{
	if (pi->nmr < ST_MAX_MRS) {
		pi->mr[pi->nmr].addr = (uintptr_t)mr->addr;
		pi->mr[pi->nmr].rkey = mr->rkey;
		pi->mr[pi->nmr].len = mr->length;
		pi->nmr++;
	}
}

/**
 * st_chan_exchange() - swap QP number, PSN, GID and MRs with the peer.
 * @ch: the channel
 * @mine: this end's
 * @theirs: the peer's
 *
 * Return: 0 or -1.
 */
int st_chan_exchange(struct st_chan *ch, const struct st_peer *mine,
		     struct st_peer *theirs)
{
	__u64 w[PEER_WORDS];
	__u32 i;

	memset(w, 0, sizeof(w));
	w[0] = mine->qpn;
	w[1] = mine->psn;
	w[2] = be64toh(mine->gid.global.subnet_prefix);
	w[3] = be64toh(mine->gid.global.interface_id);
	w[4] = mine->nmr;
	for (i = 0; i < mine->nmr && i < ST_MAX_MRS; i++) {
		w[5 + 3 * i] = mine->mr[i].addr;
		w[6 + 3 * i] = mine->mr[i].rkey;
		w[7 + 3 * i] = mine->mr[i].len;
	}
	if (st_chan_swap(ch, w, w, PEER_WORDS))
		return -1;
	memset(theirs, 0, sizeof(*theirs));
	theirs->qpn = w[0];
	theirs->psn = w[1];
	theirs->gid.global.subnet_prefix = htobe64(w[2]);
	theirs->gid.global.interface_id = htobe64(w[3]);
	theirs->nmr = w[4] < ST_MAX_MRS ? w[4] : ST_MAX_MRS;
	for (i = 0; i < theirs->nmr; i++) {
		theirs->mr[i].addr = w[5 + 3 * i];
		theirs->mr[i].rkey = w[6 + 3 * i];
		theirs->mr[i].len = w[7 + 3 * i];
	}
	return 0;
}
