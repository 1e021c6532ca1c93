// SPDX-License-Identifier: MIT
/*
 * drivers/virtio/virtio_show.c: the `virtio` command's output for fake
 * devices (features by name, unknown bits as bitN, queues with their
 * layout and interrupt vector, a device needing reset, the driver's own
 * lines only while it runs), captured from stdout and compared.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "drivers/virtio/virtio_pci.h"
#include "kernel/cpu.h"
#include "kernel/pci.h"
#include "kernel/percpu.h"
#include "kernel/shell.h"
#include "stub_kernel.h"

void virtio_show_init(void);

static const struct shell_cmd *cmd;
static struct virtio_device devs[2];
static struct pci_dev pcis[2];
static unsigned int n_devs;
static bool dev_ok[2];
static unsigned int show_calls;

void shell_register(const struct shell_cmd *c)
{
	cmd = c;
}

int shell_error(const char *fmt, ...)
{
	va_list ap;

	printf("error: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return -1;
}

/* kernel/console.c's: `virtio json` writes its line there */
void console_write(const char *buf, size_t len)
{
	fwrite(buf, 1, len, stdout);
}

unsigned int virtio_device_count(void)
{
	return n_devs;
}

struct virtio_device *virtio_device_get(unsigned int i)
{
	return &devs[i];
}

bool virtio_device_ok(struct virtio_device *vdev)
{
	return dev_ok[vdev - devs];
}

uint8_t virtio_get_status(struct virtio_device *vdev)
{
	return 0x4f;
}

static void notify(struct virtq *vq)
{
}

static void drv_show(struct virtio_device *vdev)
{
	show_calls++;
}

static const char *const names[24] = { [0] = "VSOCK_STREAM" };
static const struct virtio_driver drv = {
	.name = "virtio-vsock",
	.feature_names = names,
	.show = drv_show,
};

/* Run the command with @argc/@argv; its stdout into @out. */
static int run(int argc, char **argv, char *out, size_t max)
{
	FILE *tmp = tmpfile();
	int saved, ret;
	size_t n;

	assert_non_null(tmp);
	fflush(stdout);
	saved = dup(1);
	dup2(fileno(tmp), 1);
	ret = cmd->run(argc, argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, max - 1, tmp);
	out[n] = 0;
	fclose(tmp);
	return ret;
}

static void test_devices_features_queues(void **state)
{
	static char out[8192];
	char *argv[] = { "virtio", "extra" };
	volatile uint8_t common[4];
	struct virtq *q0, *q1;

	/* irq_count() adds up the CPUs' counts of the vector (stub_kernel.c) */
	percpu_boot.irqs[2] = 7;
	virtio_show_init();
	assert_non_null(cmd);
	n_devs = 2;
	q0 = virtq_create(VIRTQ_PACKED, 0, 16, VIRTIO_BIT(VIRTIO_F_RING_PACKED), notify, NULL);
	q1 = virtq_create(VIRTQ_SPLIT, 1, 8, 0, notify, NULL);
	assert_non_null(q0);
	assert_non_null(q1);
	pcis[0] = (struct pci_dev){
		.bus = 0, .dev = 3, .fn = 0, .vendor = 0x1af4, .device = 0x1053, .msix_size = 3
	};
	devs[0] = (struct virtio_device){ .pci = &pcis[0],
					  .type = VIRTIO_ID_VSOCK,
					  .driver = &drv,
					  .state = "running",
					  .common = common,
					  .num_queues = 2,
					  .recoveries = 1 };
	/* bits 24..40: every transport bit, named or not */
	devs[0].offered = VIRTIO_BIT(0) | VIRTIO_BIT(5) | (((1ULL << 17) - 1) << 24) |
			  VIRTIO_BIT(50);
	devs[0].features = VIRTIO_BIT(0) | VIRTIO_BIT(VIRTIO_F_VERSION_1);
	devs[0].queues[0] = (struct virtio_queue){ .vq = q0, .vector = 2 };
	devs[0].queues[1] = (struct virtio_queue){ .vq = q1, .vector = -1 };
	dev_ok[0] = true;
	/* a device found but not set up: no capability windows */
	pcis[1] =
		(struct pci_dev){ .bus = 0, .dev = 4, .fn = 1, .vendor = 0x1af4, .device = 0x1044 };
	devs[1] = (struct virtio_device){ .pci = &pcis[1], .type = VIRTIO_ID_RNG };

	assert_int_equal(run(1, argv, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "2 virtio device(s)\n"));
	assert_non_null(strstr(out, "00:03.0 virtio-vsock (type 19, pci 1af4:1053) driver "
				    "virtio-vsock: running\n"));
	assert_non_null(strstr(out, "  offered: VSOCK_STREAM bit5 NOTIFY_ON_EMPTY bit25 bit26 "
				    "ANY_LAYOUT INDIRECT_DESC EVENT_IDX bit30 bit31 VERSION_1 "
				    "ACCESS_PLATFORM RING_PACKED IN_ORDER ORDER_PLATFORM SR_IOV "
				    "NOTIFICATION_DATA NOTIF_CONFIG_DATA RING_RESET bit50\n"));
	assert_non_null(strstr(out, "  negotiated: VSOCK_STREAM VERSION_1\n"));
	assert_non_null(strstr(out, "queues: 2, msix entries: 3, broken-queue resets: 1\n"));
	assert_non_null(strstr(out, "  queue 0: packed size 16, msix vector 2 (7 irqs)\n"));
	assert_non_null(strstr(out, "  queue 1: split size 8, polled\n"));
	assert_null(strstr(out, "DEVICE_NEEDS_RESET"));
	assert_non_null(strstr(out, "00:04.1 virtio-rng (type 4, pci 1af4:1044) driver none: ?\n"));
	assert_int_equal(show_calls, 1);

	/* the same for programs: one line, one object, the devices in order */
	{
		char *json_argv[] = { "virtio", "json", NULL };

		pcis[0].bar[4] = (struct pci_bar){ .addr = 0xfe000000, .size = 0x4000 };
		assert_int_equal(run(2, json_argv, out, sizeof(out)), 0);
		assert_memory_equal(out, "virtio-json: {\"devices\":[{\"bus\":0,\"dev\":3,", 37);
		assert_non_null(strstr(out, "\"type\":\"vsock\",\"driver\":\"virtio-vsock\","
					    "\"state\":\"running\",\"bars\":[{\"addr\":4261412864,"
					    "\"size\":16384}],"));
		assert_non_null(strstr(out, "\"queues\":[{\"index\":0,\"layout\":\"packed\","
					    "\"size\":16,\"vector\":2,"));
		assert_non_null(strstr(out, "{\"index\":1,\"layout\":\"split\",\"size\":8,"
					    "\"vector\":-1,"));
		assert_non_null(strstr(out, "\"type\":\"rng\",\"driver\":\"none\",\"state\":"
					    "\"?\",\"bars\":[],\"queues\":[]}]}\n"));
		assert_int_equal(show_calls, 1); /* the text's driver lines only */
	}

	/* a device that failed: its status, and no driver lines */
	dev_ok[0] = false;
	devs[0].state = "failed";
	assert_int_equal(run(1, argv, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "  device status 0x4f: DEVICE_NEEDS_RESET or FAILED\n"));
	assert_int_equal(show_calls, 1);

	assert_int_equal(run(2, argv, out, sizeof(out)), -1);
	assert_non_null(strstr(out, "unexpected argument 'extra'"));
	virtq_destroy(q0);
	virtq_destroy(q1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_devices_features_queues),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
