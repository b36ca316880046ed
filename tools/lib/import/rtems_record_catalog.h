/* The trace catalogue of an RTEMS record event table: one event per record event, each
 * with the item's data word, so an imported stream decodes, exports and compares with the
 * same tools as the project's own traces. */
#ifndef EMB_HOST_RTEMS_RECORD_CATALOG_H
#define EMB_HOST_RTEMS_RECORD_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "rtems_record.h"

#define EMB_RTEMS_RECORD_CAT_BASE 0x1000u /* catalogue id of record event 0 */

/* The catalogue id of a record event number or EMB_RTEMS_RECORD_EV_*. */
static inline uint16_t emb_rtems_record_catalog_id(uint32_t event)
{
    return (uint16_t)(EMB_RTEMS_RECORD_CAT_BASE + event);
}

/* The catalogue as YAML text (malloc'd, NUL-terminated), or NULL when out of memory. */
char *emb_rtems_record_catalog_yaml(const struct emb_rtems_record_table *table, size_t *len);

/* The parsed catalogue of a table; NULL with a message on failure. Free with
 * emb_catalog_free(). */
struct emb_catalog *emb_rtems_record_catalog(const struct emb_rtems_record_table *table, char *err, size_t errlen);

/* The catalogue of a built-in table (versions 1, 4, 9, 10), parsed once; NULL for others. */
const struct emb_catalog *emb_rtems_record_catalog_builtin(unsigned version);

#endif /* EMB_HOST_RTEMS_RECORD_CATALOG_H */
