/* manager/drivers/meter.h -- Power meters, each read as energy over an
 * interval.
 *
 * vpowerd checks its energy model against a meter, and calibration fits
 * the model to one.  Every meter is read through the same small driver
 * table (struct meter_ops): RAPL through powercap (meter_rapl.c), hwmon
 * power and energy sensors (meter_hwmon.c), the BMC's DCMI power reading
 * through the OpenIPMI device (meter_ipmi.c) and an in-memory meter that
 * a simulator or a test drives (meter_dummy.c).
 *
 * Whatever the hardware reports, a reader sees one number: energy in
 * microjoules as a monotonic 64-bit value, meaningful only as the
 * difference between two reads.  Counters that wrap (RAPL's energy_uj at
 * max_energy_range_uj) are unwrapped by the driver; sensors that report
 * power (hwmon powerN_average, DCMI) are integrated by the driver over
 * the time between reads, which the caller supplies (time is an input).
 *
 * meter_discover() runs every driver below configurable roots (fixture
 * trees in tests) and returns what was found -- name, kind, scope, path
 * -- plus one message per thing that looked like a meter but could not
 * be used.  meter_choose_host() picks the meters that best cover the
 * whole host (see docs/meters.md for the rule).  Sysfs and BMC contents
 * are hostile input: every failure is an error naming the file or device
 * and what was wrong with it, never a crash or a made-up value.
 *
 * Functions that can fail return 0 or a negative errno and, where they
 * take 'err'/'errlen', fill it with a message naming the file. */

#ifndef VPOWER_METER_H
#define VPOWER_METER_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define METER_NAME_LEN 64
#define METER_PATH_LEN 512
#define METER_ERR_LEN 640        /* Enough for a path and a reason. */
#define METER_HOST_MAX 16        /* Meters summed into one host meter. */

#define METER_POWERCAP_ROOT "/sys/class/powercap"
#define METER_HWMON_ROOT "/sys/class/hwmon"
#define METER_IPMI_DEV "/dev/ipmi0"

enum meter_kind {
    METER_KIND_RAPL,             /* powercap intel-rapl zone (also AMD). */
    METER_KIND_HWMON,            /* hwmon energyN_input or powerN_*. */
    METER_KIND_IPMI,             /* BMC, DCMI Get Power Reading. */
    METER_KIND_DUMMY,            /* Set by a simulator or a test. */
    METER_KIND_SUM,              /* Sum of other meters (host meter). */
};

/* What a meter's energy covers. */
enum meter_scope {
    METER_SCOPE_PACKAGE,         /* One CPU package (RAPL package-N). */
    METER_SCOPE_DRAM,            /* The DRAM of one package. */
    METER_SCOPE_CORE,            /* The cores of one package (PP0). */
    METER_SCOPE_UNCORE,          /* Graphics/uncore of a package (PP1). */
    METER_SCOPE_PLATFORM,        /* The whole host (psys, BMC, ACPI). */
    METER_SCOPE_PACKAGE_DRAM,    /* All packages and their DRAM (sum). */
    METER_SCOPE_OTHER,           /* A sensor whose coverage is unknown. */
};

struct meter_ops;

/* One meter as discovered.  Plain data, copied freely. */
struct meter_info {
    const struct meter_ops *ops; /* Driver that reads it. */
    enum meter_kind kind;
    enum meter_scope scope;
    char name[METER_NAME_LEN];   /* "package-0", "dram-0", "psys",
                                  * "power_meter/power1", "ipmi-dcmi". */
    char path[METER_PATH_LEN];   /* Zone directory, sensor file or
                                  * device node. */
    int package;                 /* Package number, -1 if not per
                                  * package. */
    bool counter;                /* true: an energy counter; false: power
                                  * integrated over time by the driver. */
    uint64_t max_range_uj;       /* Counter wraps to 0 after this value;
                                  * 0 when it does not wrap (64 bits). */
    uint32_t interval_ms;        /* Sensor's averaging interval, 0 if
                                  * unknown or not averaged. */
};

/* What discovery found.  Owned by the caller: meter_list_clear(). */
struct meter_list {
    struct meter_info *meters;
    size_t n;
    char **problems;             /* One message per unusable candidate,
                                  * naming the file; for the log. */
    size_t n_problems;
};

/* Roots of every place a meter is looked for; NULL means the real one
 * (METER_POWERCAP_ROOT, METER_HWMON_ROOT, METER_IPMI_DEV).  An empty
 * string turns that driver's discovery off. */
struct meter_roots {
    const char *powercap;
    const char *hwmon;
    const char *ipmi_dev;
};

/* An open meter.  Drivers embed it as the first member of their own
 * struct; callers only use the functions below. */
struct meter {
    const struct meter_ops *ops;
    struct meter_info info;
    bool started;                /* A first read has been taken. */
    uint64_t energy_uj;          /* Unwrapped/integrated energy so far. */
    uint64_t last_raw;           /* Counter value of the last read. */
    uint64_t last_ns;            /* Time of the last read (power). */
};

struct meter_ops {
    const char *name;            /* "rapl", "hwmon", "ipmi", "dummy". */
    /* Appends to 'list' every meter found below 'root' (NULL: the
     * driver's default), and a problem message per candidate that could
     * not be used.  Nothing found is not an error. */
    void (*discover)(const char *root, struct meter_list *list);
    /* Opens the meter 'info' describes.  NULL with 'err' filled.  NULL
     * for a meter that is only a file to read: meter_open() then
     * allocates a plain struct meter. */
    struct meter *(*open)(const struct meter_info *info, char *err,
                          size_t errlen);
    /* Reads the hardware once: a counter value in microjoules into
     * '*raw' when info.counter, else a power in microwatts.  The
     * generic meter_read_uj() does the unwrapping and integration. */
    int (*sample)(struct meter *, uint64_t now_ns, uint64_t *raw,
                  char *err, size_t errlen);
    /* Releases what open() allocated; NULL frees a plain meter. */
    void (*close)(struct meter *);
};

extern const struct meter_ops meter_rapl_ops;
extern const struct meter_ops meter_hwmon_ops;
extern const struct meter_ops meter_ipmi_ops;
extern const struct meter_ops meter_dummy_ops;

/* ---- Discovery -------------------------------------------------------- */

/* Runs RAPL, hwmon and IPMI discovery below 'roots' (NULL: all real)
 * and appends to 'list', which must be zeroed or cleared. */
void meter_discover(const struct meter_roots *roots, struct meter_list *);
void meter_list_clear(struct meter_list *);

/* For drivers: appends a copy of 'info', or a formatted problem. */
void meter_list_add(struct meter_list *, const struct meter_info *info);
void meter_list_problem(struct meter_list *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* "rapl", "hwmon", ...; "package", "dram", "platform", ... */
const char *meter_kind_name(enum meter_kind);
const char *meter_scope_name(enum meter_scope);

/* ---- Choosing the whole-host meter ---------------------------------- */

struct meter_choice {
    size_t idx[METER_HOST_MAX];  /* Indices into the list, to be summed. */
    size_t n;
    enum meter_scope scope;      /* PLATFORM, PACKAGE_DRAM or PACKAGE. */
};

/* Picks the meters whose sum best covers the whole host: a platform
 * meter (RAPL psys, then a hwmon energy counter, then a hwmon power
 * sensor, then IPMI DCMI), else every RAPL package zone plus every DRAM
 * zone when each package has one, else every package zone.  -ENOENT
 * when 'list' has none of these, -E2BIG when the sum would need more
 * than METER_HOST_MAX meters (never a sum that covers less than its
 * scope says). */
int meter_choose_host(const struct meter_list *, struct meter_choice *);

/* Opens the meters of 'choice' as one meter whose energy is their sum
 * (kind SUM, the choice's scope, name "package-0+dram-0+...").  A read
 * fails if any part fails, with that part's message.  Owned by the
 * caller (meter_close()).  NULL with 'err' filled if any part fails to
 * open. */
struct meter *meter_host_open(const struct meter_list *,
                              const struct meter_choice *,
                              char *err, size_t errlen);

/* One line for a log or a status display:
 * "package-0: rapl, package, /sys/class/powercap/intel-rapl:0/energy_uj"
 * plus ", power, averaged over N ms" for a power sensor.  Returns what
 * snprintf returns. */
int meter_describe(const struct meter_info *, char *buf, size_t len);

/* Logs (module "meter") every meter of 'list' at info level, every
 * problem at warning level, and the whole-host choice or its absence. */
void meter_log_list(const struct meter_list *);

/* ---- Reading ---------------------------------------------------------- */

/* Opens the meter 'info' describes (copied; the list may be freed).
 * The caller owns the result and releases it with meter_close().  NULL
 * with 'err' filled on failure. */
struct meter *meter_open(const struct meter_info *, char *err,
                         size_t errlen);
void meter_close(struct meter *);          /* NULL is fine. */

/* Reads the meter at monotonic time 'now_ns' and stores its energy so
 * far in '*energy_uj'.  The first read of a counter returns the
 * counter's value, the first read of a power sensor 0; later reads add
 * the energy since the previous successful read: a counter's delta,
 * taking one wrap at max_range_uj into account (reads must come more
 * often than the counter wraps), or the power read now times the time
 * since the previous read.  On error '*energy_uj' and the meter's state
 * are unchanged, so the next good read covers the whole gap. */
int meter_read_uj(struct meter *, uint64_t now_ns, uint64_t *energy_uj,
                  char *err, size_t errlen);

/* ---- Helpers shared by the drivers ---------------------------------- */

/* Reads a whole sysfs value at 'path' as a strict decimal u64.  A
 * 'power' value is rejected when it has every bit set in 64 or 32 bits
 * or is 0xffffffff x 1000 (what acpi_power_meter prints, in microwatts,
 * for a _PMM of 0xffffffff): those mean the hardware has no reading.  A
 * counter is rejected only when all 64 bits are set, because a counter
 * passes through the 32-bit values in normal operation.  -EINVAL
 * (garbage), -ERANGE (all ones) or the read errno, with 'err' naming
 * 'path'. */
int meter_read_u64(const char *path, bool power, uint64_t *out, char *err,
                   size_t errlen);

/* True for the "no reading" power values meter_read_u64() rejects. */
bool meter_all_ones(uint64_t value);

/* The dummy meter, named 'name' with 'scope' and owned by the caller
 * (meter_close()); 'counter' chooses between a counter set in
 * microjoules, wrapping after 'max_range_uj' (0: 64 bits), and a power
 * set in microwatts.  Setting energy_uj or power_uw takes effect at the next
 * read; an error set with meter_dummy_fail() is returned by the next
 * read only. */
struct meter *meter_dummy_create(const char *name, enum meter_scope,
                                 bool counter, uint64_t max_range_uj);
void meter_dummy_set(struct meter *, uint64_t value);
void meter_dummy_fail(struct meter *, int error);

/* IPMI DCMI Get Power Reading (netfn 0x2C, cmd 0x02, group 0xDC):
 * the request's data bytes and the parsed response. */
#define METER_IPMI_NETFN 0x2c
#define METER_IPMI_CMD 0x02
#define METER_IPMI_GROUP 0xdc
#define METER_IPMI_REQ_LEN 4

struct meter_ipmi_reading {
    uint16_t current_w;          /* Instantaneous power, watts. */
    uint16_t min_w, max_w, avg_w; /* Over the statistics period. */
    uint32_t timestamp;          /* BMC's seconds since 1970. */
    uint32_t period_ms;          /* Statistics reporting period. */
    bool active;                 /* Power measurement active. */
};

/* Fills 'req' with the 4 data bytes of a "system power statistics"
 * (mode 1) request and returns METER_IPMI_REQ_LEN. */
size_t meter_ipmi_encode(uint8_t req[METER_IPMI_REQ_LEN]);

/* Parses response bytes 'rsp' (completion code first, as the OpenIPMI
 * device returns them).  -EIO for a non-zero completion code, -EPROTO
 * for a short reply or a wrong group id, -ENODATA when the BMC says
 * power measurement is not active or reports all-ones power; 'err' says
 * which. */
int meter_ipmi_decode(const uint8_t *rsp, size_t len,
                      struct meter_ipmi_reading *, char *err,
                      size_t errlen);

#endif /* manager/drivers/meter.h */
