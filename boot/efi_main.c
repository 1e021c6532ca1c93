// SPDX-License-Identifier: MIT
/*
 * ringside.efi: boot the kernel straight from UEFI firmware (or a chainloading
 * GRUB), no multiboot2 loader in between. Fills the same struct boot_info as
 * the other paths: command line from LoadOptions, RSDP from the configuration
 * table, the memory map taken at ExitBootServices. After that exit no
 * firmware service is called: the kernel drives COM1 itself.
 */
#include <efi.h>
#include <efilib.h>

#include "boot/efi_loader.h"

#define EXIT_TRIES 16
#define MAP_SLACK 32 /* descriptors: our own allocations split ranges */
#define LIMIT_4G 0xffffffffULL

static BOOLEAN guid_eq(const EFI_GUID *a, const EFI_GUID *b)
{
	const uint8_t *x = (const void *)a, *y = (const void *)b;

	for (unsigned int i = 0; i < sizeof(*a); i++)
		if (x[i] != y[i])
			return FALSE;
	return TRUE;
}

/* ACPI 2.0+ (XSDT) first, the 1.0 RSDP only when there is nothing newer. */
static uint64_t find_rsdp(EFI_SYSTEM_TABLE *st)
{
	static EFI_GUID acpi20 = ACPI_20_TABLE_GUID;
	static EFI_GUID acpi10 = ACPI_TABLE_GUID;
	const EFI_GUID *want[] = { &acpi20, &acpi10 };

	for (unsigned int w = 0; w < 2; w++)
		for (UINTN i = 0; i < st->NumberOfTableEntries; i++)
			if (guid_eq(&st->ConfigurationTable[i].VendorGuid, want[w]))
				return (uint64_t)(uintptr_t)st->ConfigurationTable[i].VendorTable;
	return 0;
}

static BOOLEAN is_space(char c)
{
	return c == ' ';
}

/*
 * A first word like "\EFI\BOOT\BOOTX64.EFI" or "ringside.efi" names us; a
 * kernel option is KEY=VALUE, even when the value is a path.
 */
static BOOLEAN is_image_path(const char *s, size_t n)
{
	BOOLEAN slash = FALSE;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '=')
			return FALSE;
		if (s[i] == '\\' || s[i] == '/')
			slash = TRUE;
	}
	if (slash)
		return TRUE;
	return n >= 4 && s[n - 4] == '.' && (s[n - 3] | 0x20) == 'e' && (s[n - 2] | 0x20) == 'f' &&
	       (s[n - 1] | 0x20) == 'i';
}

/*
 * LoadOptions is UCS-2 text only by convention: the UEFI shell passes the
 * whole command line (program path first), GRUB's chainloader the
 * arguments, and the boot manager the boot option's optional data, which
 * is often binary (OVMF puts a GUID there). Anything but printable ASCII
 * means "no command line" rather than a garbled one.
 */
static void read_cmdline(EFI_HANDLE image, char *out, size_t max)
{
	EFI_LOADED_IMAGE *li = NULL;
	const CHAR16 *s;
	size_t n = 0, skip = 0, len;
	UINTN count;

	out[0] = '\0';
	if (EFI_ERROR(uefi_call_wrapper(BS->HandleProtocol, 3, image, &LoadedImageProtocol,
					(void **)&li)) ||
	    !li || !li->LoadOptions || li->LoadOptionsSize % sizeof(CHAR16))
		return;
	s = li->LoadOptions;
	count = li->LoadOptionsSize / sizeof(CHAR16);
	for (UINTN i = 0; i < count && s[i]; i++) {
		CHAR16 c = s[i] == L'\t' ? L' ' : s[i];

		if (c < 0x20 || c > 0x7e) {
			out[0] = '\0';
			return;
		}
		if (n + 1 < max)
			out[n++] = (char)c;
	}
	out[n] = '\0';

	while (skip < n && is_space(out[skip]))
		skip++;
	for (len = 0; skip + len < n && !is_space(out[skip + len]);)
		len++;
	if (is_image_path(out + skip, len))
		skip += len;
	while (skip < n && is_space(out[skip]))
		skip++;
	while (n > skip && is_space(out[n - 1]))
		n--;
	for (size_t i = 0; skip + i < n; i++)
		out[i] = out[skip + i];
	out[n - skip] = '\0';
}

/* Memory below 4 GiB: the kernel's first page tables map nothing higher. */
static void *alloc_low(UINTN bytes)
{
	EFI_PHYSICAL_ADDRESS a = LIMIT_4G;

	if (EFI_ERROR(uefi_call_wrapper(BS->AllocatePages, 4, AllocateMaxAddress, EfiLoaderData,
					EFI_SIZE_TO_PAGES(bytes), &a)))
		return NULL;
	return (void *)(uintptr_t)a;
}

struct efi_map {
	void *buf;
	UINTN buf_size;
	struct boot_mem_range *tmp;
	unsigned int tmp_max;
	UINTN size, key, desc_size;
	UINT32 desc_version;
};

/* Room for the map as it is now plus what allocating the room adds. */
static EFI_STATUS map_grow(struct efi_map *m, UINTN need)
{
	EFI_STATUS status;

	if (m->buf)
		uefi_call_wrapper(BS->FreePool, 1, m->buf);
	if (m->tmp)
		uefi_call_wrapper(BS->FreePool, 1, m->tmp);
	m->buf = m->tmp = NULL;
	m->buf_size = need + MAP_SLACK * m->desc_size;
	m->tmp_max = m->buf_size / m->desc_size;
	status = uefi_call_wrapper(BS->AllocatePool, 3, EfiLoaderData, m->buf_size, &m->buf);
	if (EFI_ERROR(status))
		return status;
	return uefi_call_wrapper(BS->AllocatePool, 3, EfiLoaderData, m->tmp_max * sizeof(*m->tmp),
				 (void **)&m->tmp);
}

#ifdef RINGSIDE_EFI_STALE_KEY_TEST
/*
 * Test build only (build/efi-stale-key.efi, tests/qemu/test_efi.py): make
 * the first map key stale, as a firmware event could, and say on COM1 how
 * many ExitBootServices calls it took. Port I/O, no firmware service.
 */
static void stale_key_test_change_map(void)
{
	EFI_PHYSICAL_ADDRESS a;

	uefi_call_wrapper(BS->AllocatePages, 4, AllocateAnyPages, EfiLoaderData, 1, &a);
}

static uint8_t com1_lsr(void)
{
	uint8_t v;

	__asm__ __volatile__("inb %1, %0" : "=a"(v) : "Nd"((uint16_t)0x3fd));
	return v;
}

static void com1_putc(char c)
{
	while (!(com1_lsr() & 0x20)) /* transmit holding register empty */
		;
	__asm__ __volatile__("outb %0, %1" : : "a"(c), "Nd"((uint16_t)0x3f8));
}

static void stale_key_test_report(unsigned int calls)
{
	const char *s = "ringside.efi: ExitBootServices calls: ";

	while (*s)
		com1_putc(*s++);
	com1_putc((char)('0' + calls % 10));
	com1_putc('\r');
	com1_putc('\n');
}
#endif

/*
 * GetMemoryMap, then ExitBootServices with its key. Anything that changes
 * the map in between (an event, our own allocation) makes the key stale:
 * then EFI_INVALID_PARAMETER, and the spec's answer is to take the map
 * again and retry; only memory allocation services are allowed meanwhile.
 */
static EFI_STATUS exit_boot_services(EFI_HANDLE image, struct efi_map *m)
{
	EFI_STATUS status = EFI_SUCCESS;
	BOOLEAN tried_exit = FALSE;

	m->size = 0;
	status = uefi_call_wrapper(BS->GetMemoryMap, 5, &m->size, NULL, &m->key, &m->desc_size,
				   &m->desc_version);
	if (status != EFI_BUFFER_TOO_SMALL || m->desc_size < sizeof(EFI_MEMORY_DESCRIPTOR))
		goto fail;
	status = map_grow(m, m->size);
	if (EFI_ERROR(status))
		goto fail;

	for (unsigned int tries = 0; tries < EXIT_TRIES; tries++) {
		m->size = m->buf_size;
		status = uefi_call_wrapper(BS->GetMemoryMap, 5, &m->size, m->buf, &m->key,
					   &m->desc_size, &m->desc_version);
		if (status == EFI_BUFFER_TOO_SMALL) {
			status = map_grow(m, m->size);
			if (EFI_ERROR(status))
				goto fail;
			continue;
		}
		if (EFI_ERROR(status))
			goto fail;
#ifdef RINGSIDE_EFI_STALE_KEY_TEST
		if (tries == 0)
			stale_key_test_change_map();
#endif
		status = uefi_call_wrapper(BS->ExitBootServices, 2, image, m->key);
		if (status == EFI_SUCCESS) {
#ifdef RINGSIDE_EFI_STALE_KEY_TEST
			stale_key_test_report(tries + 1);
#endif
			return EFI_SUCCESS;
		}
		tried_exit = TRUE;
		if (status != EFI_INVALID_PARAMETER)
			break;
	}
fail:
	/* after a failed exit ConOut may be gone already; say nothing */
	if (!tried_exit)
		Print(L"ringside.efi: cannot take the memory map: %r\n", status);
	return EFI_ERROR(status) ? status : EFI_ABORTED;
}

/* sysv: gnu-efi's crt0 (_start) converts the firmware's ms_abi call */
EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
	efi_kernel_entry_fn entry;
	struct efi_map map = { 0 };
	struct boot_info *bi;
	EFI_STATUS status;

	InitializeLib(image, st);

	bi = alloc_low(sizeof(*bi));
	if (!bi) {
		Print(L"ringside.efi: no memory below 4 GiB for the boot information\n");
		return EFI_OUT_OF_RESOURCES;
	}
	SetMem(bi, sizeof(*bi), 0);
	bi->boot_path = "uefi-direct"; /* the kernel sets its own copy too */
	read_cmdline(image, bi->cmdline, sizeof(bi->cmdline));
	bi->rsdp = find_rsdp(st);

	status = efi_kernel_load(&entry);
	if (EFI_ERROR(status))
		return status;

	status = exit_boot_services(image, &map);
	if (EFI_ERROR(status))
		return status;

	/* Ours now: the firmware's timer handler must not run on our way in. */
	__asm__ __volatile__("cli" ::: "memory");
	bi->mmap_count = efi_memmap_convert(map.buf, map.size, map.desc_size, map.tmp, map.tmp_max,
					    bi->mmap, BOOT_MMAP_MAX);
	entry(bi);
}
