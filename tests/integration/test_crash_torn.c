/* Kills a process in the middle of writing a crash record, at many points, and checks
 * what the next start finds: a record that is valid is exactly one of the two the
 * writer wrote, byte for byte; anything torn is reported as corrupt or absent and never
 * handed out, and the host decoder refuses it too.
 *
 * The child writes the way the native fault path does, into a MAP_SHARED file (the
 * retained region): emb_crash_flight_area() clears the record and gives the flight area,
 * the flight recorder is filled in place (slowly here, to widen the window), then
 * emb_crash_write() writes the fields, the CRC and the magic. Records A and B alternate
 * and differ in every flight byte, so the bytes after a kill tell how far the write got.
 * The child publishes its progress through the flight fill; the parent spreads its kills
 * over the whole write by waiting for a target progress, plus a random few microseconds
 * that land some of them in the CRC and the magic of emb_crash_write(). */
#define _GNU_SOURCE

#include <fcntl.h>
#include <stdbool.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <emb/crash.h>

#include "crash_decode.h"
#include "harness.h"

#define REGION (64u * 1024u)
#define FLIGHT (16u * 1024u)
/* Kills sweep the write in rounds of SWEEP targets until the coverage below is reached; on a
 * loaded machine a kill lands later than its target, so coverage takes more rounds, never a
 * wider bound. MAX_KILLS only ends a run that could never reach it. */
#define SWEEP 400
#define MAX_KILLS (10 * SWEEP)
#define WANT_POINTS 40u
#define WANT_INSIDE 40u
#define WANT_BETWEEN 5u

static uint32_t status[EMB_CRASH_NAT_COUNT];
static volatile uint32_t *progress; /* shared with the child: flight bytes written */

static struct emb_crash_info info_of(int which, const uint8_t *flight)
{
    status[0] = EMB_CRASH_LAYOUT_X86_64;
    struct emb_crash_info info = {
        .fault_class = which ? EMB_FAULT_BUS : EMB_FAULT_MEMORY,
        .pc = which ? 0xBBBB : 0xAAAA,
        .uptime_ticks = 1000u + (uint64_t)which,
        .status_regs = status,
        .status_count = EMB_CRASH_NAT_COUNT,
        .flight = flight,
        .flight_len = FLIGHT,
        .flight_packets = 0,
    };
    return info;
}

static uint8_t pattern(int which, uint32_t i)
{
    uint8_t v = (uint8_t)(i * 7u + 3u);
    return which ? (uint8_t)~v : v;
}

/* Starts with the record the region does not hold, so every write changes its bytes. */
static void child_writes(int first)
{
    for (int which = first;; which ^= 1) {
        uint32_t cap;
        volatile uint8_t *area = emb_crash_flight_area(EMB_CRASH_NAT_COUNT, 0, &cap);
        if (area == NULL || cap < FLIGHT)
            _exit(3);
        for (uint32_t i = 0; i < FLIGHT; i++) {
            area[i] = pattern(which, i);
            *progress = i;
            if (i % 16u == 0u)
                for (volatile int spin = 0; spin < 100; spin++) {
                }
        }
        struct emb_crash_info info = info_of(which, (const uint8_t *)area);
        *progress = FLIGHT;
        if (emb_crash_write(&info) != EMB_OK)
            _exit(4);
        *progress = FLIGHT + 1u;
        /* A whole record stays in place for a while, as after a real fault. */
        struct timespec pause = {0, 50000};
        nanosleep(&pause, NULL);
    }
}

int main(void)
{
    char path[] = "/tmp/emb_torn_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || ftruncate(fd, REGION) != 0)
        return 1;
    uint8_t *region = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    unlink(path);
    if (region == MAP_FAILED)
        return 1;
    progress = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (progress == MAP_FAILED)
        return 1;

    /* The two records as they must look when whole. */
    static uint8_t want[2][REGION], flight[FLIGHT];
    size_t want_len[2];
    for (int w = 0; w < 2; w++) {
        for (uint32_t i = 0; i < FLIGHT; i++)
            flight[i] = pattern(w, i);
        struct emb_crash_info info = info_of(w, flight);
        want_len[w] = emb_crash_encode_v1(want[w], sizeof want[w], &info);
    }
    uint32_t flight_off = EMB_CRASH_V1_FLIGHT_OFFSET(EMB_CRASH_NAT_COUNT, 0);

    unsigned valid = 0, torn = 0, absent = 0, wrong = 0, believed_bad = 0;
    static unsigned char seen_point[2][FLIGHT + 2];
    unsigned points = 0;
    srand(12345);
    int kills = 0;
    for (int k = 0; k < MAX_KILLS; k++) {
        if (k % SWEEP == 0 && k > 0 && points >= WANT_POINTS && absent + torn >= WANT_INSIDE &&
            valid >= WANT_BETWEEN)
            break;
        kills++;
        emb_crash_retained_init(region, REGION);
        *progress = UINT32_MAX;
        pid_t pid = fork();
        if (pid == 0)
            child_writes(region[flight_off] == pattern(0, 0));
        uint32_t target = (uint32_t)((uint64_t)(k % SWEEP) * (FLIGHT + 2u) / SWEEP);
        int st;
        bool died = false;
        while ((*progress == UINT32_MAX || *progress < target) && !died)
            died = waitpid(pid, &st, WNOHANG) == pid;
        if (died) {
            diag("the writer ended by itself: status %d", st);
            wrong++;
            continue;
        }
        struct timespec d = {0, (rand() % 4) == 0 ? (rand() % 150) * 1000L : 0};
        if (d.tv_nsec)
            nanosleep(&d, NULL);
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) {
            diag("child ended otherwise: status %d", st);
            wrong++;
            continue;
        }
        /* The next start. */
        emb_crash_retained_init(region, REGION);
        const uint8_t *rec;
        uint32_t len;
        emb_status s = emb_crash_record_get(&rec, &len);
        struct emb_crash_record r;
        int host = emb_crash_decode(region, REGION, &r, NULL);
        if (s == EMB_OK) {
            valid++;
            if (!((len == want_len[0] && !memcmp(rec, want[0], len)) ||
                  (len == want_len[1] && !memcmp(rec, want[1], len))))
                wrong++;
            if (host != 0)
                wrong++;
        } else {
            s == EMB_E_CORRUPT ? torn++ : absent++;
            if (rec != NULL || host == 0)
                believed_bad++;
        }
        /* How far the write of the record in progress got: flight bytes of A or B. */
        for (int w = 0; w < 2; w++) {
            uint32_t n = 0;
            while (n < FLIGHT && region[flight_off + n] == pattern(w, n))
                n++;
            uint32_t point = n == FLIGHT ? FLIGHT + (s == EMB_OK) : n;
            if (n > 0 && !seen_point[w][point]) {
                seen_point[w][point] = 1;
                points++;
            }
        }
    }
    diag("%d kills: %u valid, %u torn (corrupt), %u absent; %u distinct points", kills, valid, torn,
         absent, points);
    ok(wrong == 0, "every valid record is exactly one of the two written");
    ok(believed_bad == 0, "no torn record is handed out or decodes");
    ok(valid + torn + absent == (unsigned)kills, "every kill accounted for");
    ok(points >= WANT_POINTS, "kills landed at many points of the write (%u)", points);
    ok(absent + torn >= WANT_INSIDE, "many kills landed inside a write (%u)", absent + torn);
    ok(valid >= WANT_BETWEEN, "and some between writes (%u)", valid);
    munmap(region, REGION);
    return emb_test_done();
}
