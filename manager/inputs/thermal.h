/* manager/inputs/thermal.h -- Thermal capacity limits from the kernel's
 * "thermal"
 * generic-netlink family.
 *
 * The kernel multicasts thermal events (groups "event" and "sampling"):
 * trip points crossed, cooling-device state changes, and CPU capability
 * changes (Intel HFI: per-CPU performance 0..1023).  A non-blocking libnl
 * socket subscribed to those groups is registered on the sched loop; each
 * event that limits CPUs becomes a per-CPU capacity (1024 = no limit)
 * reported through a callback, and thermal_domain_caps() turns the
 * per-CPU table into pol_input.thermal_cap_khz so the policy never plans
 * a domain above a thermal cap and prefers cores with headroom.
 *
 * Which events limit what:
 *  - CPU_CAPABILITY_CHANGE: capacity = performance x 1024 / 1023 per CPU;
 *  - CDEV_STATE_UPDATE of a cpufreq cooling device ("cpufreq-cpuN" or
 *    "cpufreq-N" in <class>/cooling_deviceID/type): state k is the k-th
 *    frequency from the top of the CPU's table (scaling_available_
 *    frequencies; linear in k/max_state without it), applied to the
 *    policy's related_cpus; other cooling devices (fans, powerclamp) do
 *    not limit CPU capacity and are ignored;
 *  - CDEV_DELETE: lifts that device's limits;
 *  - trip and zone events are counted and logged at debug level: the
 *    cooling device state they cause is what limits capacity.
 * All functions return 0 or -errno. */

#ifndef VPOWER_THERMAL_H
#define VPOWER_THERMAL_H 1

#include <stddef.h>
#include <stdint.h>

#include "policy/model.h"

struct nlmsghdr;
struct sched;

#define THERMAL_CAP_NONE 1024u

/* Called when a CPU's thermal capacity changes (1024 = no limit). */
typedef void thermal_cb(void *aux, unsigned cpu, uint32_t capacity);

struct thermal_counts {
    uint64_t events, capability, cdev_updates, trips, sampling, ignored,
             malformed;
};

struct thermal;

/* Subscribes to the thermal family's multicast groups and registers the
 * socket on 'sched'.  'class_root' replaces /sys/class/thermal and
 * 'cpu_root' /sys/devices/system/cpu (NULL: the real ones).  NULL with
 * 'err' filled if the family is missing (CONFIG_THERMAL_NETLINK off). */
struct thermal *thermal_open(struct sched *, const char *class_root,
                             const char *cpu_root, unsigned n_cpus,
                             thermal_cb *, void *aux,
                             char *err, size_t errlen);
/* The same without a socket, parsing messages of family id 'family'
 * handed to thermal_handle_msg() (tests, replay). */
struct thermal *thermal_open_detached(int family, const char *class_root,
                                      const char *cpu_root, unsigned n_cpus,
                                      thermal_cb *, void *aux);
void thermal_close(struct thermal *);      /* NULL is fine. */

/* Handles one netlink message; -EPROTO if malformed (counted). */
int thermal_handle_msg(struct thermal *, const struct nlmsghdr *,
                       size_t len);

/* Current capacity of 'cpu' (1024 if unlimited or out of range). */
uint32_t thermal_capacity(const struct thermal *, unsigned cpu);
const struct thermal_counts *thermal_counts(const struct thermal *);

/* Fills caps_khz[d] for every domain of 'm': 0 where no CPU of the
 * domain is limited, else the lowest limit of its CPUs as a frequency:
 * capacity / 1024 x the domain's highest operating point (at least the
 * lowest one: the cap never asks for less than the hardware can do). */
void thermal_domain_caps(const struct thermal *, const struct pol_model *m,
                         uint32_t caps_khz[POL_MAX_DOMAINS]);

#endif /* manager/inputs/thermal.h */
