/* manager/drivers/virtloop.h -- libvirt's event implementation on
 * manager/sched.
 *
 * libvirt delivers domain events, keepalives and RPC replies only through
 * an event implementation.  Instead of running virEventRunDefaultImpl()
 * in a thread, vpowerd registers these adapters (virEventRegisterImpl),
 * so every libvirt callback runs in the daemon's one loop, between its
 * own callbacks, and needs no lock.  Only the libvirt driver uses this. */

#ifndef VPOWER_VIRTLOOP_H
#define VPOWER_VIRTLOOP_H 1

struct sched;

/* Binds libvirt's process-wide event implementation to 's'.  Must run
 * before the first virConnectOpen(): a connection picks the
 * implementation up when it is opened.  libvirt's event API carries no
 * context pointer and cannot be unregistered, so there is one loop per
 * process: calling this again with the same 's' is a no-op returning 0;
 * with another loop it returns -EBUSY and changes nothing. */
int virtloop_register(struct sched *s);

/* Runs the free callbacks of removed handles and timeouts that still
 * wait for the loop to turn.  libvirt requires them to run outside the
 * call that removed the watch; after the last connection is closed
 * nothing holds libvirt's locks, and the loop may never turn again
 * (daemon exit), so the driver calls this from its close. */
void virtloop_flush(void);

#endif /* manager/drivers/virtloop.h */
