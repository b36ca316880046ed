# The two set-up commands: `make demo` runs the console demo end to end, `make check` runs
# every test. Both install missing Debian packages first (scripts/install-deps.sh): the
# demo only what building and the demo need, check every test-only tool as well.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE ?= cmake
CTEST ?= ctest
BUILD_TYPE ?= RelWithDebInfo

.PHONY: all deps deps-check configure build demo check check-main check-asan check-tsan check-arm \
        check-fuzz fuzz bench clean install uninstall package

all: build

deps:
	@bash scripts/install-deps.sh demo

deps-check:
	@bash scripts/install-deps.sh check

configure: deps
	@$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null

build: configure
	@$(CMAKE) --build $(BUILD) -j$(JOBS)

demo: build
	@bash examples/console/demo.sh $(BUILD)
	@bash examples/services/demo.sh $(BUILD) $(BUILD)/demo
	@bash examples/qemu-mps2/demo.sh $(BUILD) $(BUILD)/demo/mps2
	@bash examples/kernel-cortex-m/demo.sh $(BUILD) $(BUILD)/demo/kernel
	@bash examples/fleet/demo.sh $(BUILD) $(BUILD)/demo

check: check-main check-asan check-tsan check-arm check-fuzz
	@echo "make check: all suites passed"

check-main: deps-check build
	$(CTEST) --test-dir $(BUILD) --output-on-failure -j$(JOBS) -LE 'bench'

# Host tool and native port under AddressSanitizer and UndefinedBehaviorSanitizer.
check-asan: deps-check
	@$(CMAKE) -S . -B $(BUILD)/asan -DCMAKE_BUILD_TYPE=Debug -DEMB_SANITIZE=address,undefined >/dev/null
	@$(CMAKE) --build $(BUILD)/asan -j$(JOBS)
	$(CTEST) --test-dir $(BUILD)/asan --output-on-failure -j$(JOBS) -L 'unit|integration'

# The rings and their stress tests under ThreadSanitizer.
check-tsan: deps-check
	@$(CMAKE) -S . -B $(BUILD)/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEMB_SANITIZE=thread >/dev/null
	@$(CMAKE) --build $(BUILD)/tsan -j$(JOBS)
	$(CTEST) --test-dir $(BUILD)/tsan --output-on-failure -j$(JOBS) -L 'tsan'

# The target library, freestanding, for Cortex-M0 (ARMv6-M), M3, M4 and M7; and each profile
# from its name alone on Cortex-M0 and RV32IMAC (scripts/profile_builds.sh).
check-arm: build
	@for cpu in cortex-m0 cortex-m3 cortex-m4 cortex-m7; do \
	  $(CMAKE) -S . -B $(BUILD)/arm-$$cpu -DEMB_TARGET_ONLY=ON -DEMB_PORT=cortex-m \
	    -DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/cmake/arm-none-eabi.cmake -DEMB_ARM_CPU=$$cpu \
	    -DCMAKE_BUILD_TYPE=MinSizeRel -DEMB_GEN_EXECUTABLE=$(abspath $(BUILD))/bin/embgen \
	    >/dev/null && $(CMAKE) --build $(BUILD)/arm-$$cpu -j$(JOBS) || exit 1; \
	done
	@bash scripts/profile_builds.sh $(BUILD) $(JOBS)
	@# The target library at -O3 (Release): warnings only the optimiser finds after inlining
	@# (maybe-uninitialized) fail here, not in a user's Release build.
	@$(CMAKE) -S . -B $(BUILD)/arm-release -DEMB_TARGET_ONLY=ON -DEMB_PORT=cortex-m \
	  -DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/cmake/arm-none-eabi.cmake -DEMB_ARM_CPU=cortex-m4 \
	  -DCMAKE_BUILD_TYPE=Release -DEMB_GEN_EXECUTABLE=$(abspath $(BUILD))/bin/embgen >/dev/null
	@$(CMAKE) --build $(BUILD)/arm-release -j$(JOBS)

# libFuzzer targets, each run briefly.
check-fuzz: deps-check
	@CC=clang $(CMAKE) -S . -B $(BUILD)/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEMB_FUZZ=ON >/dev/null
	@$(CMAKE) --build $(BUILD)/fuzz -j$(JOBS)
	$(CTEST) --test-dir $(BUILD)/fuzz --output-on-failure -j$(JOBS) -L 'fuzz'

# Every fuzz target for FUZZ_SECONDS each (default 10 minutes), JOBS at a time; the merged
# corpus lands in tests/fuzz/corpus/, findings in $(BUILD)/fuzz/fuzz-findings/
# (docs/reliability.md).
FUZZ_SECONDS ?= 600
fuzz: deps-check
	@CC=clang $(CMAKE) -S . -B $(BUILD)/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEMB_FUZZ=ON >/dev/null
	@$(CMAKE) --build $(BUILD)/fuzz -j$(JOBS)
	@bash scripts/fuzz.sh $(BUILD)/fuzz $(FUZZ_SECONDS) $(JOBS)

bench: deps-check build
	@bash bench/run.sh $(BUILD)

# The host tools, headers, the library's sources, the CMake package and the man pages
# under PREFIX (DESTDIR prepended when set); `make uninstall` removes what the last install
# wrote ($(BUILD)/install_manifest.txt); `make package` writes $(BUILD)/package/*.deb.
PREFIX ?= /usr/local
install: build
	DESTDIR=$(DESTDIR) $(CMAKE) --install $(BUILD) --prefix $(abspath $(PREFIX))

uninstall:
	DESTDIR=$(DESTDIR) $(CMAKE) -DMANIFEST=$(abspath $(BUILD))/install_manifest.txt -P cmake/emb_uninstall.cmake

package: build
	@$(CMAKE) --build $(BUILD) --target package

clean:
	rm -rf $(BUILD)
