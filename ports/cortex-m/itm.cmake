# The ITM writer (itm.c, emb/itm.h) joins the library on cores that have an ITM: not on
# ARMv6-M (Cortex-M0, M0+, M1) nor ARMv8-M Baseline (Cortex-M23).
if(NOT EMB_ARM_CPU MATCHES "^cortex-m(0|0plus|0\\+|1|23)$")
  target_sources(emb PRIVATE ${CMAKE_CURRENT_LIST_DIR}/itm.c)
endif()
