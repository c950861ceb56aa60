/* One reading of the machine's counters, in one call: everyo.machine_state's hot path.
 *
 * A measurement reads the machine twice (before and after); TARGETS.md allows that 1 % of a
 * 1-ms window. Most of a reading used to be the kernel regenerating /proc/stat (3-4 us each
 * time, right after the measured code has cooled the caches). So the counters (/proc/stat's
 * busy ticks, and getrusage's CPU time and involuntary switches of the whole process) are read
 * by a small thread of this module, every TICK_NS, while readings are asked for (and LINGER_NS
 * after the last one; then it waits, without waking, for the next reading); a reading takes the newest copy with the time it was taken, and reads
 * the counters itself only when that copy is older than STALE_NS (the thread is starting, or
 * was descheduled). /proc/stat counts in 10-ms ticks, so a copy at most 10 ms old loses little
 * a fresh read would tell; the window between two copies is exact. The thread never touches
 * Python objects and holds no lock a reader waits for (a sequence counter guards the copy).
 *
 * machine_state.py keeps the same reading in pure Python where this is not built, and for a
 * process limited to some CPUs (then it sums the per-CPU lines).
 *
 * read() -> (monotonic s, busy ticks of every CPU or None, own CPU ticks, involuntary context
 *            switches, monotonic s at which those counters were read)
 * Ticks are the kernel's USER_HZ (sysconf(_SC_CLK_TCK)), as /proc/stat counts them.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define TICK_NS 5000000LL      /* the thread reads /proc/stat this often */
#define STALE_NS 10000000LL    /* a copy older than this is not used: read the file now */
#define LINGER_NS 3000000000LL /* the thread sleeps this long after the last reading */

static double hz = 100.0;

static long long
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Busy ticks from the total line ("cpu  user nice system idle iowait irq softirq steal ..."):
 * all but idle and iowait. -1 when the line is not there. Each caller passes its own open
 * descriptor (pread keeps no shared offset, but the thread and a reader may run at once). */
static long long
busy_ticks(int *fd)
{
    char buf[256];
    if (*fd < 0) {
        *fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
        if (*fd < 0)
            return -1;
    }
    ssize_t n = pread(*fd, buf, sizeof(buf) - 1, 0);
    if (n <= 4)
        return -1;
    buf[n] = '\0';
    if (buf[0] != 'c' || buf[1] != 'p' || buf[2] != 'u' || buf[3] != ' ')
        return -1;
    char *p = buf + 3;
    long long busy = 0;
    for (int field = 1; field <= 8; field++) {
        char *end;
        errno = 0;
        long long value = strtoll(p, &end, 10);
        if (end == p || errno != 0)
            return -1;
        if (field != 4 && field != 5)
            busy += value;
        p = end;
    }
    return busy;
}

/* The thread's newest copy: written by the thread only; seq is odd while it writes. */
static atomic_uint seq;
static atomic_llong copy_ns, copy_busy, copy_own_us, copy_involuntary;
static atomic_llong wanted_ns;  /* the newest reading's time: the thread lingers after it */
static atomic_int running;      /* 1 from the moment a reader starts the thread */

static long long
own_us(const struct rusage *usage)
{
    return (usage->ru_utime.tv_sec + usage->ru_stime.tv_sec) * 1000000LL
           + usage->ru_utime.tv_usec + usage->ru_stime.tv_usec;
}

static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_wake = PTHREAD_COND_INITIALIZER;
static atomic_int idle; /* 1 while the thread waits for a reading to want it again */

static int
wanted_lately(void)
{
    return now_ns() - atomic_load(&wanted_ns) <= LINGER_NS;
}

static void *
copier(void *unused)
{
    int fd = -1;
    struct timespec pause = {0, TICK_NS};
    struct rusage usage;
    for (;;) {
        long long busy = busy_ticks(&fd);
        if (getrusage(RUSAGE_SELF, &usage) != 0) /* the whole process's, from any thread */
            busy = -1;
        long long t = now_ns();
        atomic_fetch_add(&seq, 1);
        atomic_store(&copy_busy, busy);
        atomic_store(&copy_own_us, own_us(&usage));
        atomic_store(&copy_involuntary, usage.ru_nivcsw);
        atomic_store(&copy_ns, t);
        atomic_fetch_add(&seq, 1);
        if (busy < 0)
            break; /* no /proc/stat: readings read (and fail) themselves */
        if (!wanted_lately()) {
            /* Sleep until a reading wants copies again: no wake-ups while nothing measures.
             * idle is set before wanted_ns is checked, and a reader stores wanted_ns before it
             * reads idle, so one of the two sees the other (both are sequentially consistent). */
            pthread_mutex_lock(&idle_lock);
            atomic_store(&idle, 1);
            while (!wanted_lately())
                pthread_cond_wait(&idle_wake, &idle_lock);
            atomic_store(&idle, 0);
            pthread_mutex_unlock(&idle_lock);
            continue;
        }
        nanosleep(&pause, NULL);
    }
    if (fd >= 0)
        close(fd);
    atomic_store(&running, 0);
    return NULL;
}

static void
reset_in_child(void)
{
    /* After fork the child has no copying thread, and the lock may have been held by it. */
    pthread_mutex_init(&idle_lock, NULL);
    pthread_cond_init(&idle_wake, NULL);
    atomic_store(&idle, 0);
    atomic_store(&running, 0);
    atomic_store(&copy_ns, 0);
    atomic_store(&seq, 0);
}

static void
keep_copier_running(long long t)
{
    atomic_store(&wanted_ns, t);
    if (atomic_load(&idle)) {
        /* Signalled without the lock, so a reading never waits for the thread: a signal lost
         * between its check and its wait only leaves the copy old, and the next reading (which
         * then reads the counters itself) signals again. */
        pthread_cond_signal(&idle_wake);
        return;
    }
    int not_running = 0;
    if (!atomic_compare_exchange_strong(&running, &not_running, 1))
        return;
    /* The thread is created with every signal blocked: a process-wide signal (Ctrl-C, the
     * sampler's timer) must go to a thread that runs Python, never to this one. */
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &before);
    pthread_attr_t attr;
    pthread_t thread;
    int ok = pthread_attr_init(&attr) == 0;
    if (ok) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        ok = pthread_create(&thread, &attr, copier, NULL) == 0;
        pthread_attr_destroy(&attr);
    }
    pthread_sigmask(SIG_SETMASK, &before, NULL);
    if (!ok)
        atomic_store(&running, 0); /* readings read the counters themselves */
}

/* The thread's copy when it is at most STALE_NS old at t (and consistent): 1, else 0. */
static int
fresh_copy(long long t, long long *busy, long long *own, long long *involuntary, long long *at)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        unsigned before = atomic_load(&seq);
        if (before & 1)
            continue;
        *busy = atomic_load(&copy_busy);
        *own = atomic_load(&copy_own_us);
        *involuntary = atomic_load(&copy_involuntary);
        *at = atomic_load(&copy_ns);
        if (atomic_load(&seq) != before)
            continue;
        return *busy >= 0 && *at > 0 && t - *at <= STALE_NS;
    }
    return 0;
}

static int reader_fd = -1; /* used with the GIL held */

static PyObject *
machine_read(PyObject *self, PyObject *unused)
{
    long long t = now_ns();
    long long busy, own, involuntary, at;
    keep_copier_running(t);
    if (!fresh_copy(t, &busy, &own, &involuntary, &at)) {
        struct rusage usage;
        if (getrusage(RUSAGE_SELF, &usage) != 0)
            return PyErr_SetFromErrno(PyExc_OSError);
        busy = busy_ticks(&reader_fd);
        own = own_us(&usage);
        involuntary = usage.ru_nivcsw;
        at = t;
    }
    double own_ticks = own * 1e-6 * hz;
    if (busy < 0)
        return Py_BuildValue("(dOdLO)", t * 1e-9, Py_None, own_ticks, involuntary, Py_None);
    return Py_BuildValue("(dddLd)", t * 1e-9, (double)busy, own_ticks, involuntary, at * 1e-9);
}

static PyObject *
machine_read_now(PyObject *self, PyObject *unused)
{
    /* the busy ticks read from the file now, not the thread's copy (for tests and checks) */
    long long busy = busy_ticks(&reader_fd);
    if (busy < 0)
        Py_RETURN_NONE;
    return PyFloat_FromDouble((double)busy);
}

static PyObject *
machine_copier_state(PyObject *self, PyObject *unused)
{
    if (!atomic_load(&running))
        return PyUnicode_FromString("none");
    return PyUnicode_FromString(atomic_load(&idle) ? "idle" : "copying");
}

static PyMethodDef methods[] = {
    {"read", machine_read, METH_NOARGS,
     "read() -> (monotonic s, busy ticks of every CPU or None, own CPU ticks, involuntary "
     "context switches, monotonic s the counters were read at)"},
    {"busy_now", machine_read_now, METH_NOARGS,
     "busy_now() -> busy ticks of every CPU read from /proc/stat now, or None"},
    {"copier_state", machine_copier_state, METH_NOARGS,
     "copier_state() -> 'copying', 'idle' (waiting for a reading) or 'none' (no thread)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cmachine",
    "One reading of the machine's counters (see everyo.machine_state).", -1, methods,
};

PyMODINIT_FUNC
PyInit__cmachine(void)
{
    long ticks = sysconf(_SC_CLK_TCK);
    if (ticks > 0)
        hz = (double)ticks;
    pthread_atfork(NULL, NULL, reset_in_child);
    return PyModule_Create(&module);
}
