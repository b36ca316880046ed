# cmake -DBUILTIN=trace_events.yaml [-DUSER=my_events.yaml] -DOUT=catalog.yaml -P this
#
# Writes the built-in trace event catalogue with the classes of the firmware's own appended:
# USER is a catalogue of the same form (`version: 1`, then `classes:` at the start of a
# line and a block list of classes under it), and everything after its `classes:` line
# joins the built-in list. embgen then checks the whole as one catalogue (unique class ids
# 0..31 and names, event ids inside their class), so a clash is an error that names it.
file(READ ${BUILTIN} text)
if(USER)
  file(READ ${USER} user)
  string(FIND "${user}" "\nclasses:" at)
  if(at LESS 0)
    message(FATAL_ERROR "${USER}: no `classes:` line: a catalogue is `version: 1` and a "
                        "block list of classes under `classes:` (catalog/trace_events.yaml)")
  endif()
  math(EXPR at "${at} + 9")
  string(SUBSTRING "${user}" ${at} -1 classes)
  string(APPEND text "\n# ---- the classes of ${USER} ----\n${classes}")
endif()
file(WRITE ${OUT}.tmp "${text}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
