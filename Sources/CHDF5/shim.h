// Thin shim over libhdf5 1.10 (serial): the macros Swift cannot import become constants of the
// right type or static inline functions (type/property-list macros call H5open(), so they must be
// functions). See the team reference notes (shared/reference/c-libraries-from-swift.md) §2.
#pragma once
#include <hdf5.h>

static const hid_t   CH5P_DEFAULT   = H5P_DEFAULT;   /* else imported as Int32 */
static const hid_t   CH5S_ALL       = H5S_ALL;
static const hid_t   CH5E_DEFAULT   = H5E_DEFAULT;   /* else imported as Int32 */
static const hsize_t CH5S_UNLIMITED = H5S_UNLIMITED; /* else not imported */

static inline size_t   ch5_variable(void)       { return H5T_VARIABLE; }
static inline unsigned ch5_acc_trunc(void)      { return H5F_ACC_TRUNC; }
static inline unsigned ch5_acc_excl(void)       { return H5F_ACC_EXCL; }
static inline unsigned ch5_acc_rdonly(void)     { return H5F_ACC_RDONLY; }
static inline hid_t    ch5_native_float(void)   { return H5T_NATIVE_FLOAT; }
static inline hid_t    ch5_native_double(void)  { return H5T_NATIVE_DOUBLE; }
static inline hid_t    ch5_native_int32(void)   { return H5T_NATIVE_INT32; }
static inline hid_t    ch5_native_int64(void)   { return H5T_NATIVE_INT64; }
static inline hid_t    ch5_native_uint8(void)   { return H5T_NATIVE_UINT8; }
static inline hid_t    ch5_native_uint16(void)  { return H5T_NATIVE_UINT16; }
static inline hid_t    ch5_std_u16le(void)      { return H5T_STD_U16LE; }
static inline hid_t    ch5_ieee_f32le(void)     { return H5T_IEEE_F32LE; }
static inline hid_t    ch5_ieee_f64le(void)     { return H5T_IEEE_F64LE; }
static inline hid_t    ch5_std_i32le(void)      { return H5T_STD_I32LE; }
static inline hid_t    ch5_std_u8le(void)       { return H5T_STD_U8LE; }
static inline hid_t    ch5_c_s1(void)           { return H5T_C_S1; }
static inline hid_t    ch5_dataset_create(void) { return H5P_DATASET_CREATE; }
static inline hid_t    ch5_file_access(void)    { return H5P_FILE_ACCESS; }

/* IEEE 754 binary16, little-endian. HDF5 1.10 has no predefined half type; this layout (sign bit
 * 15, exponent bits 10-14 with bias 15, mantissa bits 0-9) is what h5py maps to numpy float16.
 * Returns a type the caller closes with H5Tclose, or a negative id on failure. */
static inline hid_t ch5_ieee_f16le(void) {
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    if (t < 0) return t;
    if (H5Tset_fields(t, 15, 10, 5, 0, 10) < 0 || H5Tset_size(t, 2) < 0 ||
        H5Tset_ebias(t, 15) < 0 || H5Tset_precision(t, 16) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}
