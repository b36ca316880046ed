/* The console demo's sensor driver (with the seeded fault of the crash demo) and the
 * crash-record handling at start. */
#ifndef CONSOLE_DRIVER_H
#define CONSOLE_DRIVER_H

#include <stddef.h>
#include <stdint.h>

/* user_event id the driver records: a = frame, b = register read. */
#define CONSOLE_EV_SENSOR_POLL 6u

/* Sets up the bus lock; from frame `fault_frame` on (UINT32_MAX: never) a poll reads
 * through a bad register pointer. */
void sensor_driver_init(uint32_t fault_frame);

/* Reads the frame's sensor register under the bus lock; returns the value. */
uint32_t sensor_driver_poll(uint32_t frame);

/* Maps the retained region `path`, installs the fault handler, and when the previous run
 * left a crash record saves it to `save_path` (the upload of a product in the field) and
 * clears it. Returns 0, or -1 when the region cannot be set up. */
int console_crash_start(const char *path, const char *save_path);

/* From now on console_crash_start() uploads the record it finds to `url`
 * (http://HOST:PORT/PATH, `emb fleet serve`) with `token`, as a device of a fleet does,
 * and clears it once the server took it. */
void console_crash_upload_to(const char *url, const char *token);

/* POSTs record[0..len) to url with "Authorization: Bearer token" (upload.c). Returns the
 * HTTP status, or -1 with why in err. */
int console_upload(const char *url, const char *token, const uint8_t *record, uint32_t len,
                   char *err, size_t errlen);

#endif /* CONSOLE_DRIVER_H */
