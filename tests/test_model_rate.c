/*
 * tests/test_model_rate.c — the CPU rate read back from StarPU's stored model of the
 * tile product (stargemm__gemm_model_rate(), codelets/gemm.c), which the
 * stationary choice takes when no kernel was measured (src/product.c), and a GPU's. One process, a
 * temporary STARPU_PERF_MODEL_DIR and STARPU_HOSTNAME, model files written here in
 * StarPU 1.3's format (as perfmodels/generate.sh writes them). TAP output.
 *
 * Properties checked:
 *  - no stored model: 0, and nothing printed by StarPU;
 *  - a regression a (m n k w)^b + c for a CPU core: the rate is the product's flops
 *    over that duration, for d (weight 1) and z (8 flops a multiply-add, weight 4),
 *    with and without a fixed cost c, and with b != 1;
 *  - a regression StarPU does not trust (fewer than 10 samples): 0;
 *  - a model with a CUDA combination only: 0 for a CPU core, its rate for CUDA device
 *    0, 0 for CUDA device 1 (no combination).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "internal.h"
#include "tap.h"



static char dir[256];

/* The model file of the tile product with one combination (device type 0: CPU, 1:
 * CUDA) whose regression is a, b, c over nsample samples. */
static void write_model(int device, double a, double b, double c, int nsample)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/codelets/45/stargemm_dgemm.stargemm-test", dir);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fprintf(f, "##################\n# Performance Model Version\n45\n\n"
		"####################\n# COMBs\n# number of combinations\n1\n"
		"####################\n# COMB_0\n# number of types devices\n1\n"
		"####################\n# DEV_0\n# device type (CPU - 0, CUDA - 1, OPENCL - 2, MIC - 3)\n%d\n"
		"####################\n# DEV_0\n# device id \n0\n"
		"####################\n# DEV_0\n# number of cores \n1\n"
		"##########\n# number of implementations\n1\n"
		"#####\n# Model for impl0 (Comb0)\n# number of entries\n0\n"
		"# sumlnx\tsumlnx2\t\tsumlny\t\tsumlnxlny\talpha\t\tbeta\t\tn\tminx\t\tmaxx\n"
		"0.000000e+00\t0.000000e+00\t0.000000e+00\t0.000000e+00\tnan\tnan\t%d\t1\t"
		"281474976710656\n# a\t\tb\t\tc\n%.17g\t%.17g\t%.17g\n"
		"# not multiple-regression-base\n0\n"
		"# hash\t\tsize\t\tflops\t\tmean (us)\tdev (us)\tsum\t\tsum2\t\tn\n\n",
		device, nsample, a, b, c);
	fclose(f);
}

static int near(double x, double want)
{
	return fabs(x - want) <= 1e-9 * fabs(want);
}

int main(void)
{
	const struct stargemm__element *d = stargemm__element('d'), *z = stargemm__element('z');
	char path[512];
	double rate, mnk = 128.0 * 128 * 128;
	int ret;

	snprintf(dir, sizeof(dir), "/tmp/stargemm-model-rate.%d", (int)getpid());
	snprintf(path, sizeof(path), "mkdir -p '%s/codelets/45'", dir);
	if (system(path) != 0) {
		printf("Bail out! cannot make %s\n", dir);
		return 1;
	}
	setenv("STARPU_PERF_MODEL_DIR", dir, 1);
	setenv("STARPU_HOSTNAME", "stargemm-test", 1);
	setenv("STARGEMM_CALIBRATE", "0", 1);
	setenv("STARPU_NCPU", "1", 1);
	setenv("STARPU_SILENT", "1", 1);
	if ((ret = stargemm_init(NULL, NULL, NULL)) != 0) {
		printf("Bail out! stargemm_init: %s\n", stargemm_last_error());
		return 1;
	}

	tap_ok(stargemm__gemm_model_rate(d, -1, 128, 128, 128) == 0.0, "no stored model: 0");

	write_model(0, 8e-5, 1.0, 0.0, 10);   /* 25 GFLOP/s in double, no fixed cost */
	rate = stargemm__gemm_model_rate(d, -1, 128, 128, 128);
	tap_ok(near(rate, 25e9), "d, a = 8e-5 us per multiply-add: 25 GFLOP/s");
	rate = stargemm__gemm_model_rate(z, -1, 128, 128, 128);
	tap_ok(near(rate, 8.0 * mnk / (8e-5 * 4.0 * mnk * 1e-6)),
	   "z: 8 flops a multiply-add over the duration of the weighed work");

	write_model(0, 8e-5, 1.0, 100.0, 10);
	rate = stargemm__gemm_model_rate(d, -1, 64, 64, 64);
	tap_ok(near(rate, 2.0 * 262144 / ((8e-5 * 262144 + 100.0) * 1e-6)),
	   "a fixed cost of 100 us counts in the duration");

	write_model(0, 2e-4, 0.9, 0.0, 10);
	rate = stargemm__gemm_model_rate(d, -1, 128, 128, 128);
	tap_ok(near(rate, 2.0 * mnk / (2e-4 * pow(mnk, 0.9) * 1e-6)), "an exponent b = 0.9");

	write_model(0, 8e-5, 1.0, 0.0, 5);
	tap_ok(stargemm__gemm_model_rate(d, -1, 128, 128, 128) == 0.0,
	   "5 samples (StarPU trusts 10): 0");

	write_model(1, 8e-5, 1.0, 0.0, 10);
	tap_ok(stargemm__gemm_model_rate(d, -1, 128, 128, 128) == 0.0,
	   "a CUDA model only: no CPU rate, 0");
	rate = stargemm__gemm_model_rate(d, 0, 128, 128, 128);
	tap_ok(near(rate, 25e9), "the same model: CUDA device 0 at 25 GFLOP/s");
	tap_ok(stargemm__gemm_model_rate(d, 1, 128, 128, 128) == 0.0,
	   "CUDA device 1, not in the model: 0");

	stargemm_finalize();
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_done();
}
