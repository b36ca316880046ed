#include "recorder.h"
int main(void) { return 0; }
