# The two commands of the README, and a few more for developers.
#   make run             install what is missing, build, run the main job
#   make test            build and run every test (SANITIZE=1: under ASan+UBSan; TEST_JOBS=N
#                        tests at once, one more than the cores by default)
#   make soak            every policy's promise on thousands of random scenarios
#                        (SCENARIOS=5000, SEED=a new one each time; a failure prints its command)
#   make bench           run the benchmarks (installs the peers they compare against)
BUILD_TYPE ?= RelWithDebInfo
ifeq ($(SANITIZE),1)
  BUILD ?= build-asan
  CMAKE_FLAGS += -DSW_SANITIZE=ON
else
  BUILD ?= build
endif
JOBS ?= $(shell nproc)
# The network tests spend about 40% of their time waiting on timeouts and on each other's
# processes: one test more than the cores keeps the CPUs busy (a clean run on 2 cores: 294 s
# with 2 jobs, 224 s with 3; under the sanitizers 525 s and 386 s).
TEST_JOBS ?= $(shell echo $$(( $$(nproc) + 1 )))
SYNCWISE := $(BUILD)/syncwise

.PHONY: all deps build run test soak bench install clean
PREFIX ?= /usr/local

all: build

deps:
	@scripts/deps.sh

# Quiet unless V=1: one line per phase, the compiler's output in $(BUILD)/build.log (its tail
# is shown when the build fails).
ifeq ($(V),1)
  QUIET :=
else
  QUIET := >> $(BUILD)/build.log 2>&1 || { tail -40 $(BUILD)/build.log; exit 1; }
endif

build: deps
	@mkdir -p $(BUILD) && : > $(BUILD)/build.log
	@echo "building in $(BUILD)/ (V=1 shows the compiler)"
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) $(QUIET)
	@cmake --build $(BUILD) -j $(JOBS) $(QUIET)

# The main job: the classic policies and the shipped learned one on the default straggling
# cluster (Fashion-MNIST, MLP 784-128-10, 10 workers), 3 seeds each, then the report of that
# comparison; bench/compare.sh runs the full 10-seed comparison.
run: build
	@rm -rf $(BUILD)/run
	@echo "comparing bsp, asp, ssp:s=1, ssp:s=4 and rlp on 3 simulated clusters each"
	@OPENBLAS_NUM_THREADS=1 $(SYNCWISE) compare --policies "bsp,asp,ssp:s=1,ssp:s=4,rlp" --seeds 3 \
	    --data fashion-mnist --model mlp:h=1,u=128 --workers 10 --target-acc 0.85 --max-time 40000 \
	    --log-dir $(BUILD)/run
	@$(SYNCWISE) report -q $(BUILD)/run/*.jsonl -o $(BUILD)/report

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(TEST_JOBS)

SCENARIOS ?= 5000
SEED ?= $(shell date +%s)
soak: build
	@OPENBLAS_NUM_THREADS=1 $(BUILD)/tests/conformance $(SYNCWISE) $(SCENARIOS) $(SEED)

bench: build
	@scripts/deps.sh bench
	@bench/step.sh $(BUILD)
	@OPENBLAS_NUM_THREADS=1 $(BUILD)/bench/bench_engine
	@$(BUILD)/bench/bench_zipline
	@OPENBLAS_NUM_THREADS=1 $(BUILD)/bench/bench_net
	@bench/placement.sh $(BUILD)
	@$(BUILD)/bench/bench_apply
	@bench/sparse.sh $(BUILD)
	@bench/compare.sh $(BUILD)
	@bench/real_stragglers.sh $(BUILD)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf build build-asan
