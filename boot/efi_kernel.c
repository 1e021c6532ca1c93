// SPDX-License-Identifier: MIT
/*
 * The kernel ELF inside the EFI image, and placing it where it is linked.
 * The kernel is not relocatable (linked and run at 1 MiB, identity-mapped),
 * so its range is claimed with AllocateAddress; if the firmware holds those
 * pages the boot fails here, with ConOut still there to say so.
 */
#include <efi.h>
#include <efilib.h>
#include <elf.h>

#include "boot/efi_loader.h"

#ifndef RINGSIDE_KERNEL_ELF
#error "RINGSIDE_KERNEL_ELF: the kernel ELF to embed (set by boot/efi.mk)"
#endif

#define KERNEL_ENTRY_SYMBOL "efi_handoff_entry"
#define LIMIT_4G (1ULL << 32)

/* hidden: reached PC-relative, so the image needs no relocation for them */
extern const uint8_t efi_kernel_elf[] __attribute__((visibility("hidden")));
extern const uint8_t efi_kernel_elf_end[] __attribute__((visibility("hidden")));

__asm__(".section .rodata\n"
	".balign 64\n"
	"efi_kernel_elf:\n"
	".incbin \"" RINGSIDE_KERNEL_ELF "\"\n"
	"efi_kernel_elf_end:\n"
	".previous\n");

static size_t kernel_size(void)
{
	return (size_t)(efi_kernel_elf_end - efi_kernel_elf);
}

/* [off, off + len) inside the embedded file, without overflow. */
static BOOLEAN in_file(uint64_t off, uint64_t len)
{
	return off <= kernel_size() && len <= kernel_size() - off;
}

static const Elf64_Ehdr *kernel_header(void)
{
	const Elf64_Ehdr *eh = (const void *)efi_kernel_elf;

	if (!in_file(0, sizeof(*eh)) || eh->e_ident[EI_MAG0] != ELFMAG0 ||
	    eh->e_ident[EI_MAG1] != ELFMAG1 || eh->e_ident[EI_MAG2] != ELFMAG2 ||
	    eh->e_ident[EI_MAG3] != ELFMAG3 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_machine != EM_X86_64 || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !in_file(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))
		return NULL;
	if (eh->e_shnum && (eh->e_shentsize != sizeof(Elf64_Shdr) ||
			    !in_file(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr))))
		return NULL;
	return eh;
}

static const Elf64_Phdr *phdr(const Elf64_Ehdr *eh, unsigned int i)
{
	return (const void *)(efi_kernel_elf + eh->e_phoff + i * sizeof(Elf64_Phdr));
}

/* The physical span of all PT_LOAD segments, page-aligned. */
static BOOLEAN load_span(const Elf64_Ehdr *eh, uint64_t *start, uint64_t *end)
{
	*start = UINT64_MAX;
	*end = 0;
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = phdr(eh, i);

		if (ph->p_type != PT_LOAD || !ph->p_memsz)
			continue;
		if (ph->p_filesz > ph->p_memsz || !in_file(ph->p_offset, ph->p_filesz) ||
		    ph->p_paddr >= LIMIT_4G || ph->p_memsz > LIMIT_4G - ph->p_paddr)
			return FALSE;
		if (ph->p_paddr < *start)
			*start = ph->p_paddr;
		if (ph->p_paddr + ph->p_memsz > *end)
			*end = ph->p_paddr + ph->p_memsz;
	}
	if (*start >= *end)
		return FALSE;
	*start &= ~(uint64_t)(EFI_PAGE_SIZE - 1);
	*end = (*end + EFI_PAGE_SIZE - 1) & ~(uint64_t)(EFI_PAGE_SIZE - 1);
	return TRUE;
}

static BOOLEAN name_is(const char *s, size_t room, const char *want)
{
	size_t i = 0;

	for (; i < room && want[i]; i++)
		if (s[i] != want[i])
			return FALSE;
	return i < room && s[i] == '\0' && want[i] == '\0';
}

/*
 * The kernel's 64-bit entry for this loader, from the symbol table: the
 * ELF entry point is the 32-bit multiboot2 one.
 */
static uint64_t find_symbol(const Elf64_Ehdr *eh, const char *name)
{
	const Elf64_Shdr *sh = (const void *)(efi_kernel_elf + eh->e_shoff);

	for (unsigned int i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *strtab;
		const Elf64_Sym *sym;
		const char *names;

		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum ||
		    sh[i].sh_entsize != sizeof(Elf64_Sym) ||
		    !in_file(sh[i].sh_offset, sh[i].sh_size))
			continue;
		strtab = &sh[sh[i].sh_link];
		if (!in_file(strtab->sh_offset, strtab->sh_size))
			continue;
		sym = (const void *)(efi_kernel_elf + sh[i].sh_offset);
		names = (const char *)efi_kernel_elf + strtab->sh_offset;
		for (uint64_t j = 0; j < sh[i].sh_size / sizeof(Elf64_Sym); j++) {
			if (sym[j].st_name < strtab->sh_size &&
			    name_is(names + sym[j].st_name, strtab->sh_size - sym[j].st_name, name))
				return sym[j].st_value;
		}
	}
	return 0;
}

EFI_STATUS efi_kernel_load(efi_kernel_entry_fn *entry)
{
	const Elf64_Ehdr *eh = kernel_header();
	EFI_PHYSICAL_ADDRESS base;
	uint64_t start, end, sym;
	EFI_STATUS status;

	if (!eh || !load_span(eh, &start, &end)) {
		Print(L"ringside.efi: the embedded kernel is not a usable x86_64 ELF\n");
		return EFI_LOAD_ERROR;
	}
	sym = find_symbol(eh, KERNEL_ENTRY_SYMBOL);
	if (sym < start || sym >= end) {
		Print(L"ringside.efi: no " KERNEL_ENTRY_SYMBOL " in the kernel\n");
		return EFI_LOAD_ERROR;
	}

	/* LoaderCode: the firmware's page tables must not make it NX */
	base = start;
	status = uefi_call_wrapper(BS->AllocatePages, 4, AllocateAddress, EfiLoaderCode,
				   (end - start) / EFI_PAGE_SIZE, &base);
	if (EFI_ERROR(status)) {
		Print(L"ringside.efi: cannot claim %lx-%lx for the kernel: %r\n", start, end,
		      status);
		return status;
	}

	/* zero first: that is .bss and the gaps between segments */
	SetMem((void *)(uintptr_t)start, end - start, 0);
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = phdr(eh, i);

		if (ph->p_type == PT_LOAD && ph->p_filesz)
			CopyMem((void *)(uintptr_t)ph->p_paddr, efi_kernel_elf + ph->p_offset,
				ph->p_filesz);
	}
	*entry = (efi_kernel_entry_fn)(uintptr_t)sym;
	return EFI_SUCCESS;
}
