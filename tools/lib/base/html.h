/* Text for an HTML page (the reports of emb diff and emb fleet). */
#ifndef EMB_BASE_HTML_H
#define EMB_BASE_HTML_H

#include <stdio.h>

/* Writes s for a page: a control byte (an escape sequence a target or a rules file held)
 * is shown as \xNN, as on a terminal, then the HTML specials are escaped. */
void emb_html_text(FILE *out, const char *s);

#endif /* EMB_BASE_HTML_H */
