# The two commands of the README, and a few more for developers.
#   make run             install what is missing, build, run the main job
#   make test            build and run every test (SANITIZE=1: under ASan+UBSan)
#   make bench           run the benchmarks (installs the peers they compare against)
BUILD_TYPE ?= RelWithDebInfo
ifeq ($(SANITIZE),1)
  BUILD ?= build-asan
  CMAKE_FLAGS += -DSW_SANITIZE=ON
else
  BUILD ?= build
endif
JOBS ?= $(shell nproc)
SYNCWISE := $(BUILD)/syncwise

.PHONY: all deps build run test bench clean

all: build

deps:
	@scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	$(SYNCWISE) train --data fashion-mnist --model mlp:h=1,u=256 --batch 16 --lr 0.01 \
	    --epochs 3 --seed 1 --out $(BUILD)/model.ckpt
	$(SYNCWISE) eval --model-file $(BUILD)/model.ckpt

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	@scripts/deps.sh bench
	@bench/step.sh $(BUILD)

clean:
	rm -rf build build-asan
