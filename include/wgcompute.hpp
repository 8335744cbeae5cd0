/*
 * wgcompute.hpp: a header-only C++17 API over the wgcompute C ABI
 * (wgcompute.h); it adds no symbols of its own to the library.
 *
 *  - RAII handles: Instance, Device, Buffer, Kernel, Stream, Event. Copying
 *    one retains the object, moving transfers the reference, the destructor
 *    releases it. A default-constructed (or moved-from) handle is empty.
 *  - Errors: every fallible call has two forms. The plain one throws
 *    wgc::Error (status() and the library's message); the one taking a
 *    trailing `std::error_code& ec` never throws: it sets ec (category
 *    wgc::category(), value the WgcStatus) and returns an empty result on
 *    failure, clearing ec on success; wgc::last_error_message() has the
 *    details. Built without exceptions (-fno-exceptions), only the
 *    error_code forms exist.
 *  - wgc::Tensor builds WgcTensor views (shape, strides, offset) of a
 *    Buffer it keeps alive; transposed(), slice() and broadcast_to() make
 *    new views without copying.
 *  - wgc::span<T> (std::span for C++17) carries host data to and from
 *    buffers and tensors.
 *  - Every built-in operator is a function (wgc::matmul, wgc::binary, ...)
 *    recording on a stream into an output tensor, as its C function does;
 *    see wgcompute.h for shapes, dtypes, statuses and blocking.
 * Threading and blocking follow the C functions each call wraps.
 */
#ifndef WGCOMPUTE_HPP
#define WGCOMPUTE_HPP

#include "wgcompute.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <iterator>
#include <new>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define WGC_HPP_EXCEPTIONS 1
#include <stdexcept>
#else
#define WGC_HPP_EXCEPTIONS 0
#endif

namespace wgc {

/* ---- errors ---------------------------------------------------------- */

/** The error category of WgcStatus values (name "wgcompute"). */
class StatusCategory final : public std::error_category {
public:
    const char *name() const noexcept override { return "wgcompute"; }
    std::string message(int status) const override { return wgc_status_string(static_cast<uint32_t>(status)); }
};

inline const std::error_category &category() noexcept {
    static const StatusCategory instance;
    return instance;
}

inline std::error_code make_error_code(WgcStatus status) noexcept {
    return std::error_code(static_cast<int>(status), category());
}

/** The calling thread's message about its last failed call. */
inline std::string last_error_message() { return wgc_last_error_message(); }

#if WGC_HPP_EXCEPTIONS
/** A failed call: its status and the library's message. */
class Error : public std::runtime_error {
public:
    Error(WgcStatus status, const std::string &message)
        : std::runtime_error(std::string(wgc_status_string(static_cast<uint32_t>(status))) + ": " + message),
          status_(status), message_(message) {}
    WgcStatus status() const noexcept { return status_; }
    /** The library's message without the status name. */
    const std::string &message() const noexcept { return message_; }
    std::error_code code() const noexcept { return make_error_code(status_); }

private:
    WgcStatus status_;
    std::string message_;
};
#endif

namespace detail {
#if WGC_HPP_EXCEPTIONS
inline void check(WgcStatus status) {
    if (status != WGC_OK) throw Error(status, wgc_last_error_message());
}
#endif
/** Store the status in ec; true on success. */
inline bool assign(WgcStatus status, std::error_code &ec) noexcept {
    if (status == WGC_OK) {
        ec.clear();
        return true;
    }
    ec = make_error_code(status);
    return false;
}
}  // namespace detail

#if WGC_HPP_EXCEPTIONS
#define WGC_HPP_THROWING(...) __VA_ARGS__
#else
#define WGC_HPP_THROWING(...)
#endif

/* ---- host data ------------------------------------------------------- */

/** A view of contiguous host elements (std::span's role in C++17). */
template <class T>
class span {
public:
    constexpr span() noexcept = default;
    constexpr span(T *data, std::size_t size) noexcept : data_(data), size_(size) {}
    template <std::size_t N>
    constexpr span(T (&array)[N]) noexcept : data_(array), size_(N) {}
    /** Any contiguous container with data() and size() (vector, array, string). */
    template <class C, class = std::enable_if_t<std::is_convertible<decltype(std::declval<C &>().data()), T *>::value>>
    constexpr span(C &c) noexcept : data_(c.data()), size_(c.size()) {}
    constexpr T *data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
    constexpr T *begin() const noexcept { return data_; }
    constexpr T *end() const noexcept { return data_ + size_; }
    constexpr T &operator[](std::size_t i) const noexcept { return data_[i]; }

private:
    T *data_ = nullptr;
    std::size_t size_ = 0;
};

/* ---- handles ----------------------------------------------------------- */

namespace detail {
/** One counted reference to a library object. */
template <class T, void (*Retain)(T *), void (*Release)(T *)>
class Handle {
public:
    Handle() noexcept = default;
    /** Take over a reference the caller owns (e.g. from a wgc_*_create call). */
    static Handle adopt(T *raw) noexcept {
        Handle h;
        h.raw_ = raw;
        return h;
    }
    Handle(const Handle &o) noexcept : raw_(o.raw_) { Retain(raw_); }
    Handle(Handle &&o) noexcept : raw_(std::exchange(o.raw_, nullptr)) {}
    Handle &operator=(const Handle &o) noexcept {
        if (raw_ != o.raw_) {
            Retain(o.raw_);
            Release(raw_);
            raw_ = o.raw_;
        }
        return *this;
    }
    Handle &operator=(Handle &&o) noexcept {
        if (this != &o) {
            Release(raw_);
            raw_ = std::exchange(o.raw_, nullptr);
        }
        return *this;
    }
    ~Handle() { Release(raw_); }
    T *get() const noexcept { return raw_; }
    explicit operator bool() const noexcept { return raw_ != nullptr; }
    /** Drop the reference now (the handle becomes empty). */
    void reset() noexcept { Release(std::exchange(raw_, nullptr)); }
    /** Give up the reference without releasing it. */
    T *release_ownership() noexcept { return std::exchange(raw_, nullptr); }

private:
    T *raw_ = nullptr;
};
}  // namespace detail

/** The entry point: the adapters found when it was created. */
class Instance : public detail::Handle<WgcInstance, wgc_instance_retain, wgc_instance_release> {
public:
    using Handle::Handle;
    Instance(Handle h) noexcept : Handle(std::move(h)) {}

    /** Enumerate adapters (WGC_BACKEND applies). */
    static Instance create(std::error_code &ec) noexcept {
        WgcInstance *raw = nullptr;
        return detail::assign(wgc_instance_create(WGC_ABI_VERSION, &raw), ec) ? Instance(adopt(raw)) : Instance();
    }
    WGC_HPP_THROWING(static Instance create() {
        WgcInstance *raw = nullptr;
        detail::check(wgc_instance_create(WGC_ABI_VERSION, &raw));
        return Instance(adopt(raw));
    })

    uint32_t adapter_count(std::error_code &ec) const noexcept {
        uint32_t n = 0;
        detail::assign(wgc_instance_adapter_count(get(), &n), ec);
        return n;
    }
    WGC_HPP_THROWING(uint32_t adapter_count() const {
        uint32_t n = 0;
        detail::check(wgc_instance_adapter_count(get(), &n));
        return n;
    })

    WgcAdapterInfo adapter_info(uint32_t index, std::error_code &ec) const noexcept {
        WgcAdapterInfo info{};
        info.struct_size = sizeof info;
        detail::assign(wgc_instance_adapter_info(get(), index, &info), ec);
        return info;
    }
    WGC_HPP_THROWING(WgcAdapterInfo adapter_info(uint32_t index) const {
        WgcAdapterInfo info{};
        info.struct_size = sizeof info;
        detail::check(wgc_instance_adapter_info(get(), index, &info));
        return info;
    })
};

/** Options of Device::create; the defaults are the C library's. */
inline WgcDeviceOptions device_options(int32_t adapter_index = -1,
                                       WgcPowerPreference preference = WGC_POWER_PREFERENCE_DEFAULT) noexcept {
    WgcDeviceOptions o{};
    o.struct_size = sizeof o;
    o.adapter_index = adapter_index;
    o.preference = static_cast<uint32_t>(preference);
    return o;
}

/** A GPU device; safe to use from many threads. */
class Device : public detail::Handle<WgcDevice, wgc_device_retain, wgc_device_release> {
public:
    using Handle::Handle;
    Device(Handle h) noexcept : Handle(std::move(h)) {}

    /** Open a device (blocks while the driver starts it). */
    static Device create(const Instance &instance, const WgcDeviceOptions &options, std::error_code &ec) noexcept {
        WgcDevice *raw = nullptr;
        return detail::assign(wgc_device_create(instance.get(), &options, &raw), ec) ? Device(adopt(raw)) : Device();
    }
    static Device create(const Instance &instance, std::error_code &ec) noexcept {
        return create(instance, device_options(), ec);
    }
    WGC_HPP_THROWING(static Device create(const Instance &instance, const WgcDeviceOptions &options = device_options()) {
        WgcDevice *raw = nullptr;
        detail::check(wgc_device_create(instance.get(), &options, &raw));
        return Device(adopt(raw));
    })

    WgcAdapterInfo info(std::error_code &ec) const noexcept {
        WgcAdapterInfo info{};
        info.struct_size = sizeof info;
        detail::assign(wgc_device_info(get(), &info), ec);
        return info;
    }
    WGC_HPP_THROWING(WgcAdapterInfo info() const {
        WgcAdapterInfo info{};
        info.struct_size = sizeof info;
        detail::check(wgc_device_info(get(), &info));
        return info;
    })

    WgcMemoryStats memory_stats(std::error_code &ec) const noexcept {
        WgcMemoryStats stats{};
        stats.struct_size = sizeof stats;
        detail::assign(wgc_device_memory_stats(get(), &stats), ec);
        return stats;
    }
    WGC_HPP_THROWING(WgcMemoryStats memory_stats() const {
        WgcMemoryStats stats{};
        stats.struct_size = sizeof stats;
        detail::check(wgc_device_memory_stats(get(), &stats));
        return stats;
    })

    /** The autotuner's mode and counters (see WgcAutotune). */
    WgcTuningStats tuning_stats(std::error_code &ec) const noexcept {
        WgcTuningStats stats{};
        stats.struct_size = sizeof stats;
        detail::assign(wgc_device_tuning_stats(get(), &stats), ec);
        return stats;
    }
    WGC_HPP_THROWING(WgcTuningStats tuning_stats() const {
        WgcTuningStats stats{};
        stats.struct_size = sizeof stats;
        detail::check(wgc_device_tuning_stats(get(), &stats));
        return stats;
    })

    /** Save the tuner's choices to the options' tuning_cache_path now; false if there is none. */
    bool save_tuning(std::error_code &ec) const noexcept {
        uint32_t saved = 0;
        detail::assign(wgc_device_save_tuning(get(), &saved), ec);
        return saved != 0;
    }
    WGC_HPP_THROWING(bool save_tuning() const {
        uint32_t saved = 0;
        detail::check(wgc_device_save_tuning(get(), &saved));
        return saved != 0;
    })

    /** Submit every stream's work and block until the GPU has finished it. */
    void synchronize(std::error_code &ec) const noexcept { detail::assign(wgc_device_synchronize(get()), ec); }
    WGC_HPP_THROWING(void synchronize() const { detail::check(wgc_device_synchronize(get())); })

    void trim_pool(uint64_t keep_bytes, std::error_code &ec) const noexcept {
        detail::assign(wgc_device_trim_pool(get(), keep_bytes), ec);
    }
    WGC_HPP_THROWING(void trim_pool(uint64_t keep_bytes = 0) const { detail::check(wgc_device_trim_pool(get(), keep_bytes)); })

    /** Destroy the GPU resources now; later calls fail with WGC_ERROR_DEVICE_LOST. */
    void destroy(std::error_code &ec) const noexcept { detail::assign(wgc_device_destroy(get()), ec); }
    WGC_HPP_THROWING(void destroy() const { detail::check(wgc_device_destroy(get())); })
};

/** GPU memory; reads and writes are ordered after recorded work. */
class Buffer : public detail::Handle<WgcBuffer, wgc_buffer_retain, wgc_buffer_release> {
public:
    using Handle::Handle;
    Buffer(Handle h) noexcept : Handle(std::move(h)) {}

    /** `size` bytes that read as zero; usage: WGC_BUFFER_USAGE_* bits. */
    static Buffer create(const Device &device, uint64_t size, uint32_t usage, std::error_code &ec) noexcept {
        WgcBuffer *raw = nullptr;
        return detail::assign(wgc_buffer_create(device.get(), size, usage, &raw), ec) ? Buffer(adopt(raw)) : Buffer();
    }
    WGC_HPP_THROWING(static Buffer create(const Device &device, uint64_t size, uint32_t usage = WGC_BUFFER_USAGE_STORAGE) {
        WgcBuffer *raw = nullptr;
        detail::check(wgc_buffer_create(device.get(), size, usage, &raw));
        return Buffer(adopt(raw));
    })

    /** `size` bytes with unspecified contents (no clear, nothing submitted):
     *  for buffers that are written completely, such as operator outputs. */
    static Buffer create_uninit(const Device &device, uint64_t size, uint32_t usage, std::error_code &ec) noexcept {
        WgcBuffer *raw = nullptr;
        return detail::assign(wgc_buffer_create_uninit(device.get(), size, usage, &raw), ec) ? Buffer(adopt(raw))
                                                                                               : Buffer();
    }
    WGC_HPP_THROWING(static Buffer create_uninit(const Device &device, uint64_t size,
                                                 uint32_t usage = WGC_BUFFER_USAGE_STORAGE) {
        WgcBuffer *raw = nullptr;
        detail::check(wgc_buffer_create_uninit(device.get(), size, usage, &raw));
        return Buffer(adopt(raw));
    })

    uint64_t size(std::error_code &ec) const noexcept {
        uint64_t n = 0;
        detail::assign(wgc_buffer_size(get(), &n), ec);
        return n;
    }
    WGC_HPP_THROWING(uint64_t size() const {
        uint64_t n = 0;
        detail::check(wgc_buffer_size(get(), &n));
        return n;
    })

    /** Copy a contiguous host container (vector, array, C array, wgc::span) in
     *  at a byte offset; offset and byte count must be multiples of 4. */
    template <class C>
    void write(const C &data, uint64_t byte_offset, std::error_code &ec) const noexcept {
        detail::assign(wgc_buffer_write(get(), byte_offset, std::data(data), bytes_of(data)), ec);
    }
    WGC_HPP_THROWING(template <class C> void write(const C &data, uint64_t byte_offset = 0) const {
        detail::check(wgc_buffer_write(get(), byte_offset, std::data(data), bytes_of(data)));
    })

    /** Fill a contiguous host container from a byte offset; blocks until the
     *  work recorded before has finished. */
    template <class C>
    void read(C &&data, uint64_t byte_offset, std::error_code &ec) const noexcept {
        detail::assign(wgc_buffer_read(get(), byte_offset, std::data(data), bytes_of(data)), ec);
    }
    WGC_HPP_THROWING(template <class C> void read(C &&data, uint64_t byte_offset = 0) const {
        detail::check(wgc_buffer_read(get(), byte_offset, std::data(data), bytes_of(data)));
    })

private:
    template <class C>
    static uint64_t bytes_of(const C &data) noexcept {
        return static_cast<uint64_t>(std::size(data)) * sizeof(*std::data(data));
    }
};

/** A point recorded in a stream. */
class Event : public detail::Handle<WgcEvent, wgc_event_retain, wgc_event_release> {
public:
    using Handle::Handle;
    Event(Handle h) noexcept : Handle(std::move(h)) {}

    void wait(std::error_code &ec) const noexcept { detail::assign(wgc_event_wait(get()), ec); }
    WGC_HPP_THROWING(void wait() const { detail::check(wgc_event_wait(get())); })

    bool query(std::error_code &ec) const noexcept {
        uint32_t done = 0;
        detail::assign(wgc_event_query(get(), &done), ec);
        return done != 0;
    }
    WGC_HPP_THROWING(bool query() const {
        uint32_t done = 0;
        detail::check(wgc_event_query(get(), &done));
        return done != 0;
    })

    /** GPU milliseconds from this event to `end` (blocks until both passed). */
    double elapsed_ms(const Event &end, std::error_code &ec) const noexcept {
        double ms = 0;
        detail::assign(wgc_event_elapsed_ms(get(), end.get(), &ms), ec);
        return ms;
    }
    WGC_HPP_THROWING(double elapsed_ms(const Event &end) const {
        double ms = 0;
        detail::check(wgc_event_elapsed_ms(get(), end.get(), &ms));
        return ms;
    })
};

/** A compiled WGSL entry point. */
class Kernel : public detail::Handle<WgcKernel, wgc_kernel_retain, wgc_kernel_release> {
public:
    using Handle::Handle;
    Kernel(Handle h) noexcept : Handle(std::move(h)) {}

    /** Compile (blocks while the driver compiles; cached per source and entry point). */
    static Kernel create(const Device &device, const char *source, const char *entry_point, std::error_code &ec,
                         bool skip_bounds_checks = false) noexcept {
        WgcKernelDesc desc = make_desc(source, entry_point, skip_bounds_checks);
        WgcKernel *raw = nullptr;
        return detail::assign(wgc_kernel_create(device.get(), &desc, &raw), ec) ? Kernel(adopt(raw)) : Kernel();
    }
    WGC_HPP_THROWING(static Kernel create(const Device &device, const char *source, const char *entry_point,
                                          bool skip_bounds_checks = false) {
        WgcKernelDesc desc = make_desc(source, entry_point, skip_bounds_checks);
        WgcKernel *raw = nullptr;
        detail::check(wgc_kernel_create(device.get(), &desc, &raw));
        return Kernel(adopt(raw));
    })

    std::array<uint32_t, 3> workgroup_size(std::error_code &ec) const noexcept {
        std::array<uint32_t, 3> s{};
        detail::assign(wgc_kernel_workgroup_size(get(), s.data()), ec);
        return s;
    }
    WGC_HPP_THROWING(std::array<uint32_t, 3> workgroup_size() const {
        std::array<uint32_t, 3> s{};
        detail::check(wgc_kernel_workgroup_size(get(), s.data()));
        return s;
    })

private:
    static WgcKernelDesc make_desc(const char *source, const char *entry_point, bool skip) noexcept {
        WgcKernelDesc d{};
        d.struct_size = sizeof d;
        d.source = source;
        d.entry_point = entry_point;
        d.skip_bounds_checks = skip ? 1u : 0u;
        return d;
    }
};

/** A buffer range bound to `@binding(number)`; size 0 binds to the end. */
inline WgcBinding binding(uint32_t number, const Buffer &buffer, uint64_t offset = 0, uint64_t size = 0) noexcept {
    WgcBinding b{};
    b.binding = number;
    b.buffer = buffer.get();
    b.offset = offset;
    b.size = size;
    return b;
}

/** Ordered, batched GPU work; one thread at a time. */
class Stream : public detail::Handle<WgcStream, wgc_stream_retain, wgc_stream_release> {
public:
    using Handle::Handle;
    Stream(Handle h) noexcept : Handle(std::move(h)) {}

    static Stream create(const Device &device, std::error_code &ec) noexcept {
        WgcStream *raw = nullptr;
        return detail::assign(wgc_stream_create(device.get(), &raw), ec) ? Stream(adopt(raw)) : Stream();
    }
    WGC_HPP_THROWING(static Stream create(const Device &device) {
        WgcStream *raw = nullptr;
        detail::check(wgc_stream_create(device.get(), &raw));
        return Stream(adopt(raw));
    })

    /** Record a launch; `params` (may be empty) fills the kernel's var<uniform>. */
    void launch(const Kernel &kernel, std::initializer_list<WgcBinding> bindings, std::array<uint32_t, 3> workgroups,
                span<const unsigned char> params, std::error_code &ec) const noexcept {
        WgcLaunch l = make_launch(bindings, workgroups, params);
        detail::assign(wgc_stream_launch(get(), kernel.get(), &l), ec);
    }
    WGC_HPP_THROWING(void launch(const Kernel &kernel, std::initializer_list<WgcBinding> bindings,
                                 std::array<uint32_t, 3> workgroups, span<const unsigned char> params = {}) const {
        WgcLaunch l = make_launch(bindings, workgroups, params);
        detail::check(wgc_stream_launch(get(), kernel.get(), &l));
    })

    void copy_buffer(const Buffer &src, uint64_t src_offset, const Buffer &dst, uint64_t dst_offset, uint64_t size,
                     std::error_code &ec) const noexcept {
        detail::assign(wgc_stream_copy_buffer(get(), src.get(), src_offset, dst.get(), dst_offset, size), ec);
    }
    WGC_HPP_THROWING(void copy_buffer(const Buffer &src, uint64_t src_offset, const Buffer &dst, uint64_t dst_offset,
                                      uint64_t size) const {
        detail::check(wgc_stream_copy_buffer(get(), src.get(), src_offset, dst.get(), dst_offset, size));
    })

    void fill_buffer(const Buffer &buffer, uint64_t offset, uint64_t size, uint32_t pattern, std::error_code &ec) const noexcept {
        detail::assign(wgc_stream_fill_buffer(get(), buffer.get(), offset, size, pattern), ec);
    }
    WGC_HPP_THROWING(void fill_buffer(const Buffer &buffer, uint64_t offset, uint64_t size, uint32_t pattern) const {
        detail::check(wgc_stream_fill_buffer(get(), buffer.get(), offset, size, pattern));
    })

    void flush(std::error_code &ec) const noexcept { detail::assign(wgc_stream_flush(get()), ec); }
    WGC_HPP_THROWING(void flush() const { detail::check(wgc_stream_flush(get())); })

    void synchronize(std::error_code &ec) const noexcept { detail::assign(wgc_stream_synchronize(get()), ec); }
    WGC_HPP_THROWING(void synchronize() const { detail::check(wgc_stream_synchronize(get())); })

    Event record_event(std::error_code &ec) const noexcept {
        WgcEvent *raw = nullptr;
        return detail::assign(wgc_stream_record_event(get(), &raw), ec) ? Event(Event::adopt(raw)) : Event();
    }
    WGC_HPP_THROWING(Event record_event() const {
        WgcEvent *raw = nullptr;
        detail::check(wgc_stream_record_event(get(), &raw));
        return Event(Event::adopt(raw));
    })

private:
    static WgcLaunch make_launch(std::initializer_list<WgcBinding> bindings, std::array<uint32_t, 3> workgroups,
                                 span<const unsigned char> params) noexcept {
        WgcLaunch l{};
        l.struct_size = sizeof l;
        l.bindings = bindings.begin();
        l.binding_count = static_cast<uint32_t>(bindings.size());
        l.params = params.size() ? params.data() : nullptr;
        l.params_size = params.size();
        for (std::size_t i = 0; i < 3; i++) l.workgroups[i] = workgroups[i];
        return l;
    }
};

/* ---- profiling -------------------------------------------------------- */

/** Turn per-command GPU timing on or off for `stream`
 *  (`wgc_stream_set_profiling`: off by default, no cost when off). */
inline void set_profiling(const Stream &stream, bool on, std::error_code &ec) noexcept {
    detail::assign(wgc_stream_set_profiling(stream.get(), on ? 1u : 0u), ec);
}
WGC_HPP_THROWING(inline void set_profiling(const Stream &stream, bool on) {
    detail::check(wgc_stream_set_profiling(stream.get(), on ? 1u : 0u));
})

/** Forget a stream's profile records (`wgc_stream_profile_clear`). */
inline void clear_profile(const Stream &stream, std::error_code &ec) noexcept {
    detail::assign(wgc_stream_profile_clear(stream.get()), ec);
}
WGC_HPP_THROWING(inline void clear_profile(const Stream &stream) {
    detail::check(wgc_stream_profile_clear(stream.get()));
})

/** The records a profiled stream has so far, one per GPU command
 *  (`wgc_stream_profile_records`: blocks until they ran). Owns the array
 *  and frees it; `table()` summarises it like torch.profiler's table. */
class Profile {
public:
    Profile() noexcept = default;
    Profile(const Profile &) = delete;
    Profile &operator=(const Profile &) = delete;
    Profile(Profile &&o) noexcept : records_(o.records_), count_(o.count_) {
        o.records_ = nullptr;
        o.count_ = 0;
    }
    Profile &operator=(Profile &&o) noexcept {
        if (this != &o) {
            reset();
            records_ = o.records_;
            count_ = o.count_;
            o.records_ = nullptr;
            o.count_ = 0;
        }
        return *this;
    }
    ~Profile() { reset(); }

    static Profile take(const Stream &stream, std::error_code &ec) noexcept {
        Profile p;
        detail::assign(wgc_stream_profile_records(stream.get(), &p.records_, &p.count_), ec);
        return p;
    }
    WGC_HPP_THROWING(static Profile take(const Stream &stream) {
        Profile p;
        detail::check(wgc_stream_profile_records(stream.get(), &p.records_, &p.count_));
        return p;
    })

    std::size_t size() const noexcept { return count_; }
    const WgcProfileRecord &operator[](std::size_t i) const noexcept { return records_[i]; }
    const WgcProfileRecord *begin() const noexcept { return records_; }
    const WgcProfileRecord *end() const noexcept { return records_ + count_; }

    /** The summary (`wgc_profile_table`): one row per operator
     *  (`WGC_PROFILE_GROUP_BY_OPERATOR`) or kernel variant, at most
     *  `max_rows` rows (0: all). */
    WGC_HPP_THROWING(std::string table(uint32_t group = WGC_PROFILE_GROUP_BY_OPERATOR, uint32_t max_rows = 0) const {
        std::size_t len = 0;
        detail::check(wgc_profile_table(records_, count_, group, max_rows, nullptr, 0, &len));
        std::string text(len + 1, '\0');
        detail::check(wgc_profile_table(records_, count_, group, max_rows, &text[0], text.size(), &len));
        text.resize(len);
        return text;
    })

private:
    void reset() noexcept {
        if (records_) wgc_profile_records_free(records_);
        records_ = nullptr;
        count_ = 0;
    }
    WgcProfileRecord *records_ = nullptr;
    std::size_t count_ = 0;
};

/* ---- graphs ----------------------------------------------------------- */

/** Work captured on a stream and replayed with everything resolved (see
 *  `WgcGraph` in wgcompute.h: what cannot be captured, ownership, threads).
 *  `Graph::capture(stream, [&] { ...record... })` ends the capture even when
 *  the recording throws (the partial graph is dropped). */
class Graph : public detail::Handle<WgcGraph, wgc_graph_retain, wgc_graph_release> {
public:
    using Handle::Handle;
    Graph(Handle h) noexcept : Handle(std::move(h)) {}

    static void begin_capture(const Stream &s, std::error_code &ec) noexcept {
        detail::assign(wgc_stream_begin_capture(s.get()), ec);
    }
    static Graph end_capture(const Stream &s, std::error_code &ec) noexcept {
        WgcGraph *raw = nullptr;
        return detail::assign(wgc_stream_end_capture(s.get(), &raw), ec) ? Graph(adopt(raw)) : Graph();
    }
    /** During a capture: the index the next launch will have (for `WgcGraphScalar.launch`). */
    static uint32_t next_launch(const Stream &s, std::error_code &ec) noexcept {
        uint32_t n = 0;
        detail::assign(wgc_stream_capture_launch_count(s.get(), &n), ec);
        return n;
    }
    WGC_HPP_THROWING(static void begin_capture(const Stream &s) { detail::check(wgc_stream_begin_capture(s.get())); })
    WGC_HPP_THROWING(static Graph end_capture(const Stream &s) {
        WgcGraph *raw = nullptr;
        detail::check(wgc_stream_end_capture(s.get(), &raw));
        return Graph(adopt(raw));
    })
    WGC_HPP_THROWING(static uint32_t next_launch(const Stream &s) {
        uint32_t n = 0;
        detail::check(wgc_stream_capture_launch_count(s.get(), &n));
        return n;
    })
    /** During a capture: the index the next built-in operator's first replay
     *  value will have (for `WgcGraphValue.index`; see `WgcGraph`). */
    static uint32_t next_value(const Stream &s, std::error_code &ec) noexcept {
        uint32_t n = 0;
        detail::assign(wgc_stream_capture_value_count(s.get(), &n), ec);
        return n;
    }
    WGC_HPP_THROWING(static uint32_t next_value(const Stream &s) {
        uint32_t n = 0;
        detail::check(wgc_stream_capture_value_count(s.get(), &n));
        return n;
    })
    WGC_HPP_THROWING(template <class F> static Graph capture(const Stream &s, F &&record) {
        begin_capture(s);
        try {
            record();
        } catch (...) {
            WgcGraph *raw = nullptr;
            if (wgc_stream_end_capture(s.get(), &raw) == WGC_OK) wgc_graph_release(raw);
            throw;
        }
        return end_capture(s);
    })

    /** The slot of a captured buffer (for `WgcGraphRebind.slot`). */
    uint32_t slot(const Buffer &b, std::error_code &ec) const noexcept {
        uint32_t slot = 0;
        detail::assign(wgc_graph_buffer_slot(get(), b.get(), &slot), ec);
        return slot;
    }
    WGC_HPP_THROWING(uint32_t slot(const Buffer &b) const {
        uint32_t slot = 0;
        detail::check(wgc_graph_buffer_slot(get(), b.get(), &slot));
        return slot;
    })

    /** Dispatches, launches and slots the graph holds. */
    std::array<uint32_t, 3> counts(std::error_code &ec) const noexcept {
        std::array<uint32_t, 3> c{};
        detail::assign(wgc_graph_counts(get(), &c[0], &c[1], &c[2]), ec);
        return c;
    }
    WGC_HPP_THROWING(std::array<uint32_t, 3> counts() const {
        std::array<uint32_t, 3> c{};
        detail::check(wgc_graph_counts(get(), &c[0], &c[1], &c[2]));
        return c;
    })

    /** Record the captured work on `s`; `rebinds` and `scalars` change this replay only. */
    void replay(const Stream &s, span<const WgcGraphRebind> rebinds, span<const WgcGraphScalar> scalars,
                std::error_code &ec) const noexcept {
        WgcGraphReplay r = make_replay(rebinds, scalars);
        detail::assign(wgc_graph_replay(get(), s.get(), &r), ec);
    }
    void replay(const Stream &s, std::error_code &ec) const noexcept {
        detail::assign(wgc_graph_replay(get(), s.get(), nullptr), ec);
    }
    WGC_HPP_THROWING(void replay(const Stream &s, span<const WgcGraphRebind> rebinds = {},
                                 span<const WgcGraphScalar> scalars = {}) const {
        WgcGraphReplay r = make_replay(rebinds, scalars);
        detail::check(wgc_graph_replay(get(), s.get(), &r));
    })
    /** A replay with new values of built-in operators' scalar arguments too. */
    void replay(const Stream &s, span<const WgcGraphRebind> rebinds, span<const WgcGraphScalar> scalars,
                span<const WgcGraphValue> values, std::error_code &ec) const noexcept {
        WgcGraphReplay r = make_replay(rebinds, scalars, values);
        detail::assign(wgc_graph_replay(get(), s.get(), &r), ec);
    }
    WGC_HPP_THROWING(void replay(const Stream &s, span<const WgcGraphRebind> rebinds,
                                 span<const WgcGraphScalar> scalars, span<const WgcGraphValue> values) const {
        WgcGraphReplay r = make_replay(rebinds, scalars, values);
        detail::check(wgc_graph_replay(get(), s.get(), &r));
    })

private:
    static WgcGraphReplay make_replay(span<const WgcGraphRebind> rebinds, span<const WgcGraphScalar> scalars,
                                      span<const WgcGraphValue> values = {}) noexcept {
        WgcGraphReplay r{};
        r.struct_size = sizeof r;
        r.rebinds = rebinds.size() ? rebinds.data() : nullptr;
        r.rebind_count = static_cast<uint32_t>(rebinds.size());
        r.scalars = scalars.size() ? scalars.data() : nullptr;
        r.scalar_count = static_cast<uint32_t>(scalars.size());
        r.values = values.size() ? values.data() : nullptr;
        r.value_count = static_cast<uint32_t>(values.size());
        return r;
    }
};

/* ---- tensor views ----------------------------------------------------- */

/** Bytes per element of a dtype. */
inline std::size_t dtype_size(uint32_t dtype) noexcept {
    return dtype == WGC_DTYPE_F16 || dtype == WGC_DTYPE_BF16 ? 2 : 4;
}

/** A WgcTensor view that keeps its buffer alive. Strides and offset count
 *  elements; views made from it share the buffer. */
class Tensor {
public:
    Tensor() noexcept = default;

    /** A row-major view of `buffer` from element 0. */
    Tensor(Buffer buffer, WgcDtype dtype, std::initializer_list<int64_t> shape) noexcept
        : Tensor(std::move(buffer), dtype, shape.begin(), static_cast<uint32_t>(shape.size())) {}
    Tensor(Buffer buffer, WgcDtype dtype, const int64_t *shape, uint32_t rank) noexcept : buffer_(std::move(buffer)) {
        t_.buffer = buffer_.get();
        t_.dtype = static_cast<uint32_t>(dtype);
        t_.rank = rank > WGC_MAX_RANK ? WGC_MAX_RANK + 1u : rank;  // too many dims: the library rejects the view
        int64_t step = 1;
        for (uint32_t k = rank < WGC_MAX_RANK ? rank : WGC_MAX_RANK; k-- > 0;) {
            t_.shape[k] = shape[k];
            t_.strides[k] = step;
            step *= shape[k] > 0 ? shape[k] : 1;
        }
    }

    /** A new contiguous tensor in a buffer of its own (reads as zero). */
    static Tensor empty(const Device &device, WgcDtype dtype, std::initializer_list<int64_t> shape,
                        std::error_code &ec) noexcept {
        Buffer b = Buffer::create(device, bytes_for(dtype, shape), WGC_BUFFER_USAGE_STORAGE, ec);
        return b ? Tensor(std::move(b), dtype, shape) : Tensor();
    }
    WGC_HPP_THROWING(static Tensor empty(const Device &device, WgcDtype dtype, std::initializer_list<int64_t> shape) {
        return Tensor(Buffer::create(device, bytes_for(dtype, shape)), dtype, shape);
    })

    /** A new contiguous tensor with unspecified values (`Buffer::create_uninit`):
     *  for operator outputs, which are written completely. */
    static Tensor uninit(const Device &device, WgcDtype dtype, std::initializer_list<int64_t> shape,
                         std::error_code &ec) noexcept {
        Buffer b = Buffer::create_uninit(device, bytes_for(dtype, shape), WGC_BUFFER_USAGE_STORAGE, ec);
        return b ? Tensor(std::move(b), dtype, shape) : Tensor();
    }
    WGC_HPP_THROWING(static Tensor uninit(const Device &device, WgcDtype dtype, std::initializer_list<int64_t> shape) {
        return Tensor(Buffer::create_uninit(device, bytes_for(dtype, shape)), dtype, shape);
    })

    const WgcTensor *c() const noexcept { return &t_; }
    const Buffer &buffer() const noexcept { return buffer_; }
    uint32_t dtype() const noexcept { return t_.dtype; }
    uint32_t rank() const noexcept { return t_.rank; }
    int64_t shape(uint32_t dim) const noexcept { return t_.shape[dim]; }
    int64_t stride(uint32_t dim) const noexcept { return t_.strides[dim]; }
    int64_t offset() const noexcept { return t_.offset; }
    int64_t numel() const noexcept {
        int64_t n = 1;
        for (uint32_t k = 0; k < t_.rank && k < WGC_MAX_RANK; k++) n *= t_.shape[k];
        return n;
    }
    bool is_contiguous() const noexcept {
        int64_t step = 1;
        for (uint32_t k = t_.rank; k-- > 0;) {
            if (t_.shape[k] != 1 && t_.strides[k] != step) return false;
            step *= t_.shape[k];
        }
        return true;
    }

    /** The same elements with other strides and offset (elements). */
    Tensor with_strides(std::initializer_list<int64_t> strides, int64_t offset) const noexcept {
        Tensor v = *this;
        uint32_t k = 0;
        for (int64_t s : strides)
            if (k < WGC_MAX_RANK) v.t_.strides[k++] = s;
        v.t_.offset = offset;
        return v;
    }
    /** Dims d0 and d1 swapped (negative counts from the end). */
    Tensor transposed(int d0 = -2, int d1 = -1) const noexcept {
        Tensor v = *this;
        uint32_t a = dim(d0), b = dim(d1);
        if (a < t_.rank && b < t_.rank) {
            std::swap(v.t_.shape[a], v.t_.shape[b]);
            std::swap(v.t_.strides[a], v.t_.strides[b]);
        }
        return v;
    }
    /** Elements start, start+step, ... below stop along `d` (step may be negative:
     *  then from start down to above stop, as Python's slices). */
    Tensor slice(int d, int64_t start, int64_t stop, int64_t step = 1) const noexcept {
        Tensor v = *this;
        uint32_t k = dim(d);
        if (k >= t_.rank || step == 0) return v;
        int64_t n = step > 0 ? (stop - start + step - 1) / step : (start - stop - step - 1) / -step;
        if (n < 0) n = 0;
        v.t_.shape[k] = n;
        v.t_.strides[k] = t_.strides[k] * step;
        if (n) v.t_.offset += start * t_.strides[k];
        return v;
    }
    /** NumPy broadcasting: size-1 and missing leading dims repeat with stride 0.
     *  Dims that cannot broadcast are kept, so operators report the mismatch. */
    Tensor broadcast_to(std::initializer_list<int64_t> shape) const noexcept {
        Tensor v = *this;
        uint32_t rank = static_cast<uint32_t>(shape.size());
        if (rank < t_.rank || rank > WGC_MAX_RANK) return v;
        uint32_t pad = rank - t_.rank, k = 0;
        for (int64_t n : shape) {
            int64_t own = k < pad ? 1 : t_.shape[k - pad];
            int64_t stride = k < pad ? 0 : t_.strides[k - pad];
            v.t_.shape[k] = own == n ? own : (own == 1 ? n : own);
            v.t_.strides[k] = own == n ? stride : 0;
            k++;
        }
        v.t_.rank = rank;
        return v;
    }

    /** Copy a host container into a contiguous view (bytes: a multiple of 4). */
    template <class C>
    void write(const C &data, std::error_code &ec) const noexcept {
        buffer_.write(data, byte_offset(), ec);
    }
    WGC_HPP_THROWING(template <class C> void write(const C &data) const { buffer_.write(data, byte_offset()); })
    /** Read a contiguous view into a host container (blocks until computed). */
    template <class C>
    void read(C &&data, std::error_code &ec) const noexcept {
        buffer_.read(std::forward<C>(data), byte_offset(), ec);
    }
    WGC_HPP_THROWING(template <class C> void read(C &&data) const { buffer_.read(std::forward<C>(data), byte_offset()); })
    /** A contiguous view's elements as a vector of T (blocks until computed). */
    WGC_HPP_THROWING(template <class T> std::vector<T> to_vector() const {
        std::vector<T> out(static_cast<std::size_t>(numel()));
        read(out);
        return out;
    })

private:
    uint32_t dim(int d) const noexcept {
        return d < 0 ? static_cast<uint32_t>(static_cast<int>(t_.rank) + d) : static_cast<uint32_t>(d);
    }
    uint64_t byte_offset() const noexcept { return static_cast<uint64_t>(t_.offset) * dtype_size(t_.dtype); }
    static uint64_t bytes_for(WgcDtype dtype, std::initializer_list<int64_t> shape) noexcept {
        uint64_t n = 1;
        for (int64_t s : shape) n *= s > 0 ? static_cast<uint64_t>(s) : 0u;
        uint64_t bytes = (n * dtype_size(dtype) + 3) / 4 * 4;
        return bytes ? bytes : 4;
    }

    Buffer buffer_;
    WgcTensor t_{};
};

/* ---- operators ---------------------------------------------------------- */
/* Each records on `stream` and returns without blocking, as its wgc_op_*
 * function (wgcompute.h documents shapes, dtypes and statuses). Optional
 * tensors (bias, weight) are pointers; nullptr passes NULL. */


/* ---- elementwise expressions ---------------------------------------------- */

/** An elementwise expression (wgc_expr_*): build nodes, mark outputs, launch
 * with wgc::expr(). Node ids are the C API's. With exceptions, `Expr::Node`
 * values combine with + - * / (a number becomes a constant of the node's
 * dtype) and the free functions of this section:
 *
 *     wgc::Expr e = wgc::Expr::create();
 *     auto a = e.input(WGC_DTYPE_F32), b = e.input(WGC_DTYPE_F32);
 *     e.output(wgc::sqrt(wgc::relu(a * b + 1.0)) * 0.5);
 *     wgc::Tensor in[] = {ta, tb}, out[] = {tout};
 *     wgc::expr(stream, e, in, out, {});
 *
 * A Node points to the Expr it came from, which must outlive it. */
class Expr : public detail::Handle<WgcExpr, wgc_expr_retain, wgc_expr_release> {
public:
    using Handle::Handle;
    Expr(Handle h) noexcept : Handle(std::move(h)) {}

    /** A node of this expression and its dtype. */
    struct Node {
        const Expr *expr;
        uint32_t id;
        uint32_t dtype;
    };

    static Expr create(std::error_code &ec) noexcept {
        WgcExpr *raw = nullptr;
        return detail::assign(wgc_expr_create(&raw), ec) ? Expr(adopt(raw)) : Expr();
    }
    WGC_HPP_THROWING(static Expr create() {
        WgcExpr *raw = nullptr;
        detail::check(wgc_expr_create(&raw));
        return Expr(adopt(raw));
    })

    /** The builders, each with a `std::error_code &` form and a throwing one. */
    Node input(WgcDtype d, std::error_code &ec) const noexcept { return add(ec, d, wgc_expr_input, get(), d); }
    Node scalar(WgcDtype d, double v, std::error_code &ec) const noexcept {
        return add(ec, d, wgc_expr_scalar, get(), d, v);
    }
    Node param(WgcDtype d, std::error_code &ec) const noexcept { return add(ec, d, wgc_expr_param, get(), d); }
    Node unary(WgcUnaryOp op, Node a, std::error_code &ec) const noexcept {
        return add(ec, a.dtype, wgc_expr_unary, get(), op, a.id);
    }
    Node binary(WgcBinaryOp op, Node a, Node b, std::error_code &ec) const noexcept {
        uint32_t d = op >= WGC_BINARY_OP_EQ ? uint32_t(WGC_DTYPE_U32) : a.dtype;
        return add(ec, d, wgc_expr_binary, get(), op, a.id, b.id);
    }
    Node where(Node mask, Node a, Node b, std::error_code &ec) const noexcept {
        return add(ec, a.dtype, wgc_expr_where, get(), mask.id, a.id, b.id);
    }
    Node fma(Node a, Node b, Node c, std::error_code &ec) const noexcept {
        return add(ec, a.dtype, wgc_expr_fma, get(), a.id, b.id, c.id);
    }
    Node cast(Node a, WgcDtype d, std::error_code &ec) const noexcept {
        return add(ec, d, wgc_expr_cast, get(), a.id, d);
    }
    void output(Node n, std::error_code &ec) const noexcept { detail::assign(wgc_expr_output(get(), n.id), ec); }
#if WGC_HPP_EXCEPTIONS
    Node input(WgcDtype d) const { return thrown([&](std::error_code &ec) { return input(d, ec); }); }
    Node scalar(WgcDtype d, double v) const { return thrown([&](std::error_code &ec) { return scalar(d, v, ec); }); }
    Node param(WgcDtype d) const { return thrown([&](std::error_code &ec) { return param(d, ec); }); }
    Node unary(WgcUnaryOp op, Node a) const { return thrown([&](std::error_code &ec) { return unary(op, a, ec); }); }
    Node binary(WgcBinaryOp op, Node a, Node b) const {
        return thrown([&](std::error_code &ec) { return binary(op, a, b, ec); });
    }
    Node where(Node m, Node a, Node b) const { return thrown([&](std::error_code &ec) { return where(m, a, b, ec); }); }
    Node fma(Node a, Node b, Node c) const { return thrown([&](std::error_code &ec) { return fma(a, b, c, ec); }); }
    Node cast(Node a, WgcDtype d) const { return thrown([&](std::error_code &ec) { return cast(a, d, ec); }); }
    void output(Node n) const { detail::check(wgc_expr_output(get(), n.id)); }
#endif

private:
    template <class F, class... A>
    static Node add_raw(const Expr *self, std::error_code &ec, uint32_t dtype, F f, A... args) noexcept {
        uint32_t id = 0;
        detail::assign(f(args..., &id), ec);
        return Node{self, id, dtype};
    }
    template <class F, class... A>
    Node add(std::error_code &ec, uint32_t dtype, F f, A... args) const noexcept {
        return add_raw(this, ec, dtype, f, args...);
    }
#if WGC_HPP_EXCEPTIONS
    template <class F>
    static Node thrown(F f) {
        std::error_code ec;
        Node n = f(ec);
        if (ec) throw Error(static_cast<WgcStatus>(ec.value()), wgc_last_error_message());
        return n;
    }
#endif
};

#if WGC_HPP_EXCEPTIONS
namespace detail {
inline Expr::Node constant_like(Expr::Node like, double v) {
    return like.expr->scalar(static_cast<WgcDtype>(like.dtype), v);
}
}  // namespace detail
inline Expr::Node operator+(Expr::Node a, Expr::Node b) { return a.expr->binary(WGC_BINARY_OP_ADD, a, b); }
inline Expr::Node operator-(Expr::Node a, Expr::Node b) { return a.expr->binary(WGC_BINARY_OP_SUB, a, b); }
inline Expr::Node operator*(Expr::Node a, Expr::Node b) { return a.expr->binary(WGC_BINARY_OP_MUL, a, b); }
inline Expr::Node operator/(Expr::Node a, Expr::Node b) { return a.expr->binary(WGC_BINARY_OP_DIV, a, b); }
inline Expr::Node operator+(Expr::Node a, double b) { return a + detail::constant_like(a, b); }
inline Expr::Node operator-(Expr::Node a, double b) { return a - detail::constant_like(a, b); }
inline Expr::Node operator*(Expr::Node a, double b) { return a * detail::constant_like(a, b); }
inline Expr::Node operator/(Expr::Node a, double b) { return a / detail::constant_like(a, b); }
inline Expr::Node operator+(double a, Expr::Node b) { return detail::constant_like(b, a) + b; }
inline Expr::Node operator-(double a, Expr::Node b) { return detail::constant_like(b, a) - b; }
inline Expr::Node operator*(double a, Expr::Node b) { return detail::constant_like(b, a) * b; }
inline Expr::Node operator/(double a, Expr::Node b) { return detail::constant_like(b, a) / b; }
inline Expr::Node operator-(Expr::Node a) { return a.expr->unary(WGC_UNARY_OP_NEG, a); }
inline Expr::Node maximum(Expr::Node a, Expr::Node b) { return a.expr->binary(WGC_BINARY_OP_MAXIMUM, a, b); }
inline Expr::Node minimum(Expr::Node a, Expr::Node b) { return a.expr->binary(WGC_BINARY_OP_MINIMUM, a, b); }
inline Expr::Node exp(Expr::Node a) { return a.expr->unary(WGC_UNARY_OP_EXP, a); }
inline Expr::Node log(Expr::Node a) { return a.expr->unary(WGC_UNARY_OP_LOG, a); }
inline Expr::Node sqrt(Expr::Node a) { return a.expr->unary(WGC_UNARY_OP_SQRT, a); }
inline Expr::Node tanh(Expr::Node a) { return a.expr->unary(WGC_UNARY_OP_TANH, a); }
inline Expr::Node sigmoid(Expr::Node a) { return a.expr->unary(WGC_UNARY_OP_SIGMOID, a); }
inline Expr::Node relu(Expr::Node a) { return a.expr->unary(WGC_UNARY_OP_RELU, a); }
inline Expr::Node silu(Expr::Node a) { return a.expr->unary(WGC_UNARY_OP_SILU, a); }
#endif

namespace detail {
inline const WgcTensor *opt(const Tensor *t) noexcept { return t ? t->c() : nullptr; }

/** wgc_op_concat over Tensor objects: their C views gathered in one array. */
inline WgcStatus concat(const Stream &s, span<const Tensor> inputs, int32_t axis, const Tensor &out) noexcept {
    WgcTensor small[16];
    WgcTensor *views = inputs.size() <= 16 ? small : new (std::nothrow) WgcTensor[inputs.size()];
    if (!views) return WGC_ERROR_OUT_OF_MEMORY;
    for (std::size_t i = 0; i < inputs.size(); i++) views[i] = *inputs[i].c();
    WgcStatus status = wgc_op_concat(s.get(), views, static_cast<uint32_t>(inputs.size()), axis, out.c());
    if (views != small) delete[] views;
    return status;
}

/** wgc_op_expr over Tensor objects: their C views gathered in arrays. */
inline WgcStatus expr(const Stream &s, const Expr &e, span<const Tensor> inputs, span<const Tensor> outputs,
                      span<const double> params) noexcept {
    WgcTensor in[WGC_EXPR_MAX_INPUTS], out[WGC_EXPR_MAX_OUTPUTS];
    if (inputs.size() > WGC_EXPR_MAX_INPUTS || outputs.size() > WGC_EXPR_MAX_OUTPUTS) return WGC_ERROR_LIMIT_EXCEEDED;
    for (std::size_t i = 0; i < inputs.size(); i++) in[i] = *inputs[i].c();
    for (std::size_t i = 0; i < outputs.size(); i++) out[i] = *outputs[i].c();
    return wgc_op_expr(s.get(), e.get(), in, static_cast<uint32_t>(inputs.size()), out,
                       static_cast<uint32_t>(outputs.size()), params.data(), static_cast<uint32_t>(params.size()));
}

/** wgc_op_expr_reduce over Tensor objects; `epilogue` may be nullptr. */
inline WgcStatus expr_reduce(const Stream &s, const Expr &e, WgcReduceOp op, span<const int32_t> axes, bool keepdim,
                             span<const Tensor> inputs, span<const double> params, const Expr *epilogue,
                             const Tensor &out) noexcept {
    WgcTensor in[WGC_EXPR_MAX_INPUTS];
    if (inputs.size() > WGC_EXPR_MAX_INPUTS) return WGC_ERROR_LIMIT_EXCEEDED;
    for (std::size_t i = 0; i < inputs.size(); i++) in[i] = *inputs[i].c();
    return wgc_op_expr_reduce(s.get(), e.get(), op, axes.data(), static_cast<uint32_t>(axes.size()), keepdim ? 1u : 0u,
                              in, static_cast<uint32_t>(inputs.size()), params.data(),
                              static_cast<uint32_t>(params.size()), epilogue ? epilogue->get() : nullptr, out.c());
}
}  // namespace detail

#define WGC_HPP_OP(name, call, ...)                                                                   \
    inline void name(__VA_ARGS__, std::error_code &ec) noexcept { detail::assign(call, ec); }         \
    WGC_HPP_THROWING(inline void name(__VA_ARGS__) { detail::check(call); })

WGC_HPP_OP(binary, wgc_op_binary(s.get(), op, a.c(), b.c(), out.c()), const Stream &s, WgcBinaryOp op, const Tensor &a,
           const Tensor &b, const Tensor &out)
WGC_HPP_OP(binary_scalar, wgc_op_binary_scalar(s.get(), op, a.c(), scalar, out.c()), const Stream &s, WgcBinaryOp op,
           const Tensor &a, double scalar, const Tensor &out)
WGC_HPP_OP(add, wgc_op_binary(s.get(), WGC_BINARY_OP_ADD, a.c(), b.c(), out.c()), const Stream &s, const Tensor &a,
           const Tensor &b, const Tensor &out)
WGC_HPP_OP(sub, wgc_op_binary(s.get(), WGC_BINARY_OP_SUB, a.c(), b.c(), out.c()), const Stream &s, const Tensor &a,
           const Tensor &b, const Tensor &out)
WGC_HPP_OP(mul, wgc_op_binary(s.get(), WGC_BINARY_OP_MUL, a.c(), b.c(), out.c()), const Stream &s, const Tensor &a,
           const Tensor &b, const Tensor &out)
WGC_HPP_OP(div, wgc_op_binary(s.get(), WGC_BINARY_OP_DIV, a.c(), b.c(), out.c()), const Stream &s, const Tensor &a,
           const Tensor &b, const Tensor &out)
WGC_HPP_OP(unary, wgc_op_unary(s.get(), op, in.c(), out.c()), const Stream &s, WgcUnaryOp op, const Tensor &in,
           const Tensor &out)
WGC_HPP_OP(leaky_relu, wgc_op_leaky_relu(s.get(), in.c(), slope, out.c()), const Stream &s, const Tensor &in, float slope,
           const Tensor &out)
WGC_HPP_OP(clamp, wgc_op_clamp(s.get(), in.c(), lo, hi, out.c()), const Stream &s, const Tensor &in, double lo, double hi,
           const Tensor &out)
WGC_HPP_OP(fma, wgc_op_fma(s.get(), a.c(), b.c(), c.c(), out.c()), const Stream &s, const Tensor &a, const Tensor &b,
           const Tensor &c, const Tensor &out)
WGC_HPP_OP(where, wgc_op_where(s.get(), mask.c(), a.c(), b.c(), out.c()), const Stream &s, const Tensor &mask,
           const Tensor &a, const Tensor &b, const Tensor &out)
WGC_HPP_OP(random_uniform, wgc_op_random_uniform(s.get(), out.c(), seed, offset, lo, hi), const Stream &s,
           const Tensor &out, uint64_t seed, uint64_t offset, double lo, double hi)
WGC_HPP_OP(random_normal, wgc_op_random_normal(s.get(), out.c(), seed, offset, mean, stddev), const Stream &s,
           const Tensor &out, uint64_t seed, uint64_t offset, double mean, double stddev)
WGC_HPP_OP(copy, wgc_op_copy(s.get(), in.c(), out.c()), const Stream &s, const Tensor &in, const Tensor &out)
WGC_HPP_OP(permute, wgc_op_permute(s.get(), in.c(), perm.data(), static_cast<uint32_t>(perm.size()), out.c()),
           const Stream &s, const Tensor &in, span<const uint32_t> perm, const Tensor &out)
WGC_HPP_OP(transpose, wgc_op_transpose(s.get(), in.c(), dim0, dim1, out.c()), const Stream &s, const Tensor &in,
           int32_t dim0, int32_t dim1, const Tensor &out)
WGC_HPP_OP(cast, wgc_op_cast(s.get(), in.c(), out.c()), const Stream &s, const Tensor &in, const Tensor &out)
WGC_HPP_OP(fill, wgc_op_fill(s.get(), out.c(), value), const Stream &s, const Tensor &out, double value)
WGC_HPP_OP(arange, wgc_op_arange(s.get(), out.c(), start, step), const Stream &s, const Tensor &out, double start,
           double step)
WGC_HPP_OP(gemm, wgc_op_gemm(s.get(), alpha, a.c(), transpose_a, b.c(), transpose_b, beta, c.c()), const Stream &s,
           float alpha, const Tensor &a, uint32_t transpose_a, const Tensor &b, uint32_t transpose_b, float beta,
           const Tensor &c)
/** How `gemm` with these operands would run, and why (`wgc_op_gemm_explain`);
 *  records nothing. An empty string on failure. */
inline std::string explain_gemm(const Stream &s, float alpha, const Tensor &a, uint32_t transpose_a, const Tensor &b,
                                uint32_t transpose_b, float beta, const Tensor &c, std::error_code &ec) {
    auto explain = [&](char *buf, std::size_t len, std::size_t *out_len) {
        return wgc_op_gemm_explain(s.get(), alpha, a.c(), transpose_a, b.c(), transpose_b, beta, c.c(), buf, len,
                                   out_len);
    };
    std::size_t len = 0;
    if (!detail::assign(explain(nullptr, 0, &len), ec)) return {};
    std::string text(len + 1, '\0');
    if (!detail::assign(explain(&text[0], text.size(), &len), ec)) return {};
    text.resize(len);
    return text;
}
WGC_HPP_THROWING(inline std::string explain_gemm(const Stream &s, float alpha, const Tensor &a, uint32_t transpose_a,
                                                 const Tensor &b, uint32_t transpose_b, float beta, const Tensor &c) {
    std::error_code ec;
    std::string text = explain_gemm(s, alpha, a, transpose_a, b, transpose_b, beta, c, ec);
    if (ec) throw Error(static_cast<WgcStatus>(ec.value()), wgc_last_error_message());
    return text;
})
WGC_HPP_OP(matmul, wgc_op_matmul(s.get(), a.c(), b.c(), out.c()), const Stream &s, const Tensor &a, const Tensor &b,
           const Tensor &out)
WGC_HPP_OP(conv2d, wgc_op_conv2d(s.get(), &p, in.c(), weight.c(), detail::opt(bias), out.c()), const Stream &s,
           const WgcConv2dParams &p, const Tensor &in, const Tensor &weight, const Tensor *bias, const Tensor &out)
/** How `conv2d` with these operands would run, and why
 *  (`wgc_op_conv2d_explain`); records nothing. An empty string on failure. */
inline std::string explain_conv2d(const Stream &s, const WgcConv2dParams &p, const Tensor &in, const Tensor &weight,
                                  const Tensor *bias, const Tensor &out, std::error_code &ec) {
    auto explain = [&](char *buf, std::size_t len, std::size_t *out_len) {
        return wgc_op_conv2d_explain(s.get(), &p, in.c(), weight.c(), detail::opt(bias), out.c(), buf, len, out_len);
    };
    std::size_t len = 0;
    if (!detail::assign(explain(nullptr, 0, &len), ec)) return {};
    std::string text(len + 1, '\0');
    if (!detail::assign(explain(&text[0], text.size(), &len), ec)) return {};
    text.resize(len);
    return text;
}
WGC_HPP_THROWING(inline std::string explain_conv2d(const Stream &s, const WgcConv2dParams &p, const Tensor &in,
                                                   const Tensor &weight, const Tensor *bias, const Tensor &out) {
    std::error_code ec;
    std::string text = explain_conv2d(s, p, in, weight, bias, out, ec);
    if (ec) throw Error(static_cast<WgcStatus>(ec.value()), wgc_last_error_message());
    return text;
})
WGC_HPP_OP(conv2d_bn_act,
           wgc_op_conv2d_bn_act(s.get(), &p, in.c(), detail::opt(weight), detail::opt(bias), detail::opt(running_mean),
                                detail::opt(running_var), detail::opt(bn_weight), detail::opt(bn_bias),
                                folded_weight.c(), detail::opt(folded_bias), out.c()),
           const Stream &s, const WgcConv2dBnActParams &p, const Tensor &in, const Tensor *weight, const Tensor *bias,
           const Tensor *running_mean, const Tensor *running_var, const Tensor *bn_weight, const Tensor *bn_bias,
           const Tensor &folded_weight, const Tensor *folded_bias, const Tensor &out)
/** `conv2d_bn_act` with `residual` added before the activation
 *  (`wgc_op_conv2d_bn_act_residual`): `out = act(bn(conv(in)) + residual)`. */
WGC_HPP_OP(conv2d_bn_act_residual,
           wgc_op_conv2d_bn_act_residual(s.get(), &p, in.c(), detail::opt(weight), detail::opt(bias),
                                         detail::opt(running_mean), detail::opt(running_var), detail::opt(bn_weight),
                                         detail::opt(bn_bias), folded_weight.c(), detail::opt(folded_bias),
                                         residual.c(), out.c()),
           const Stream &s, const WgcConv2dBnActParams &p, const Tensor &in, const Tensor *weight, const Tensor *bias,
           const Tensor *running_mean, const Tensor *running_var, const Tensor *bn_weight, const Tensor *bn_bias,
           const Tensor &folded_weight, const Tensor *folded_bias, const Tensor &residual, const Tensor &out)
/** A GEMM with its epilogue fused (`wgc_op_gemm_epilogue`):
 *  `c = act(alpha op(a) op(b) * scale + bias (+ residual)) (+ residual)`;
 *  `bias`, `scale`, `residual` may be nullptr. */
WGC_HPP_OP(gemm_epilogue,
           wgc_op_gemm_epilogue(s.get(), &p, a.c(), b.c(), detail::opt(bias), detail::opt(scale),
                                detail::opt(residual), c.c()),
           const Stream &s, const WgcGemmEpilogueParams &p, const Tensor &a, const Tensor &b, const Tensor *bias,
           const Tensor *scale, const Tensor *residual, const Tensor &c)
/** How `gemm_epilogue` with these operands would run and where it applies
 *  the epilogue (`wgc_op_gemm_epilogue_explain`); records nothing. An empty
 *  string on failure. */
inline std::string explain_gemm_epilogue(const Stream &s, const WgcGemmEpilogueParams &p, const Tensor &a,
                                         const Tensor &b, const Tensor *bias, const Tensor *scale,
                                         const Tensor *residual, const Tensor &c, std::error_code &ec) {
    auto explain = [&](char *buf, std::size_t len, std::size_t *out_len) {
        return wgc_op_gemm_epilogue_explain(s.get(), &p, a.c(), b.c(), detail::opt(bias), detail::opt(scale),
                                            detail::opt(residual), c.c(), buf, len, out_len);
    };
    std::size_t len = 0;
    if (!detail::assign(explain(nullptr, 0, &len), ec)) return {};
    std::string text(len + 1, '\0');
    if (!detail::assign(explain(&text[0], text.size(), &len), ec)) return {};
    text.resize(len);
    return text;
}
WGC_HPP_THROWING(inline std::string explain_gemm_epilogue(const Stream &s, const WgcGemmEpilogueParams &p,
                                                          const Tensor &a, const Tensor &b, const Tensor *bias,
                                                          const Tensor *scale, const Tensor *residual,
                                                          const Tensor &c) {
    std::error_code ec;
    std::string text = explain_gemm_epilogue(s, p, a, b, bias, scale, residual, c, ec);
    if (ec) throw Error(static_cast<WgcStatus>(ec.value()), wgc_last_error_message());
    return text;
})
WGC_HPP_OP(max_pool2d, wgc_op_max_pool2d(s.get(), &p, in.c(), out.c()), const Stream &s, const WgcPool2dParams &p,
           const Tensor &in, const Tensor &out)
WGC_HPP_OP(avg_pool2d, wgc_op_avg_pool2d(s.get(), &p, in.c(), out.c()), const Stream &s, const WgcPool2dParams &p,
           const Tensor &in, const Tensor &out)
WGC_HPP_OP(global_avg_pool2d, wgc_op_global_avg_pool2d(s.get(), in.c(), out.c()), const Stream &s, const Tensor &in,
           const Tensor &out)
WGC_HPP_OP(layer_norm,
           wgc_op_layer_norm(s.get(), in.c(), detail::opt(weight), detail::opt(bias), normalized_dims, eps, out.c()),
           const Stream &s, const Tensor &in, const Tensor *weight, const Tensor *bias, uint32_t normalized_dims,
           float eps, const Tensor &out)
WGC_HPP_OP(rms_norm, wgc_op_rms_norm(s.get(), in.c(), detail::opt(weight), normalized_dims, eps, out.c()),
           const Stream &s, const Tensor &in, const Tensor *weight, uint32_t normalized_dims, float eps,
           const Tensor &out)
WGC_HPP_OP(batch_norm,
           wgc_op_batch_norm(s.get(), in.c(), mean.c(), var.c(), detail::opt(weight), detail::opt(bias), eps, out.c()),
           const Stream &s, const Tensor &in, const Tensor &mean, const Tensor &var, const Tensor *weight,
           const Tensor *bias, float eps, const Tensor &out)
WGC_HPP_OP(reduce,
           wgc_op_reduce(s.get(), op, in.c(), axes.data(), static_cast<uint32_t>(axes.size()), keepdim, out.c()),
           const Stream &s, WgcReduceOp op, const Tensor &in, span<const int32_t> axes, uint32_t keepdim,
           const Tensor &out)
WGC_HPP_OP(var,
           wgc_op_var(s.get(), in.c(), axes.data(), static_cast<uint32_t>(axes.size()), keepdim, unbiased, out.c()),
           const Stream &s, const Tensor &in, span<const int32_t> axes, uint32_t keepdim, uint32_t unbiased,
           const Tensor &out)
WGC_HPP_OP(stddev,
           wgc_op_std(s.get(), in.c(), axes.data(), static_cast<uint32_t>(axes.size()), keepdim, unbiased, out.c()),
           const Stream &s, const Tensor &in, span<const int32_t> axes, uint32_t keepdim, uint32_t unbiased,
           const Tensor &out)
WGC_HPP_OP(softmax, wgc_op_softmax(s.get(), in.c(), axis, out.c()), const Stream &s, const Tensor &in, int32_t axis,
           const Tensor &out)
WGC_HPP_OP(log_softmax, wgc_op_log_softmax(s.get(), in.c(), axis, out.c()), const Stream &s, const Tensor &in,
           int32_t axis, const Tensor &out)
WGC_HPP_OP(index_select, wgc_op_index_select(s.get(), in.c(), axis, index.c(), out.c()), const Stream &s,
           const Tensor &in, int32_t axis, const Tensor &index, const Tensor &out)
WGC_HPP_OP(gather, wgc_op_gather(s.get(), in.c(), axis, index.c(), out.c()), const Stream &s, const Tensor &in,
           int32_t axis, const Tensor &index, const Tensor &out)
WGC_HPP_OP(embedding, wgc_op_embedding(s.get(), table.c(), index.c(), out.c()), const Stream &s, const Tensor &table,
           const Tensor &index, const Tensor &out)
WGC_HPP_OP(concat, detail::concat(s, inputs, axis, out), const Stream &s, span<const Tensor> inputs, int32_t axis,
           const Tensor &out)
WGC_HPP_OP(rope, wgc_op_rope(s.get(), in.c(), &desc, out.c()), const Stream &s, const Tensor &in,
           const WgcRopeDesc &desc, const Tensor &out)
WGC_HPP_OP(topk, wgc_op_topk(s.get(), in.c(), k, largest, values.c(), indices.c()), const Stream &s, const Tensor &in,
           uint32_t k, uint32_t largest, const Tensor &values, const Tensor &indices)
WGC_HPP_OP(cumsum, wgc_op_cumsum(s.get(), in.c(), axis, out.c()), const Stream &s, const Tensor &in, int32_t axis,
           const Tensor &out)
// Scaled dot-product attention; mask, kv_lens and lse may be nullptr.
WGC_HPP_OP(attention,
           wgc_op_attention(s.get(), q.c(), k.c(), v.c(), detail::opt(mask), detail::opt(kv_lens), &desc, out.c(),
                            detail::opt(lse)),
           const Stream &s, const Tensor &q, const Tensor &k, const Tensor &v, const Tensor *mask,
           const Tensor *kv_lens, const WgcAttentionDesc &desc, const Tensor &out, const Tensor *lse)

WGC_HPP_OP(expr, detail::expr(s, e, inputs, outputs, params), const Stream &s, const Expr &e, span<const Tensor> inputs,
           span<const Tensor> outputs, span<const double> params)
// Reduce e's one output over `axes` (empty: all), then `epilogue` (nullptr: none);
// `params`: e's parameters, then the epilogue's.
WGC_HPP_OP(expr_reduce, detail::expr_reduce(s, e, op, axes, keepdim, inputs, params, epilogue, out), const Stream &s,
           const Expr &e, WgcReduceOp op, span<const int32_t> axes, bool keepdim, span<const Tensor> inputs,
           span<const double> params, const Expr *epilogue, const Tensor &out)
WGC_HPP_OP(rms_norm_residual,
           wgc_op_rms_norm_residual(s.get(), in.c(), residual.c(), detail::opt(weight), normalized_dims, eps, out.c(),
                                    sum_out.c()),
           const Stream &s, const Tensor &in, const Tensor &residual, const Tensor *weight, uint32_t normalized_dims,
           float eps, const Tensor &out, const Tensor &sum_out)
WGC_HPP_OP(layer_norm_residual,
           wgc_op_layer_norm_residual(s.get(), in.c(), residual.c(), detail::opt(weight), detail::opt(bias),
                                      normalized_dims, eps, out.c(), sum_out.c()),
           const Stream &s, const Tensor &in, const Tensor &residual, const Tensor *weight, const Tensor *bias,
           uint32_t normalized_dims, float eps, const Tensor &out, const Tensor &sum_out)


/* ---- several devices ------------------------------------------------------ */
/* Copies between devices and collectives: wgcompute.h documents ordering,
 * blocking and statuses (wgc_buffer_copy_to_device, WgcComm). */

WGC_HPP_OP(copy_to_device,
           wgc_buffer_copy_to_device(src_stream.get(), src.get(), src_offset, dst_stream.get(), dst.get(), dst_offset,
                                     size),
           const Stream &src_stream, const Buffer &src, uint64_t src_offset, const Stream &dst_stream,
           const Buffer &dst, uint64_t dst_offset, uint64_t size)
WGC_HPP_OP(copy_to_device, wgc_tensor_copy_to_device(src_stream.get(), src.c(), dst_stream.get(), dst.c()),
           const Stream &src_stream, const Tensor &src, const Stream &dst_stream, const Tensor &dst)

/** How copies from `src` to `dst` move their bytes (wgc_device_peer_route):
 * WGC_PEER_ROUTE_IMPORTED or WGC_PEER_ROUTE_STAGED. */
inline WgcPeerRoute peer_route(const Device &src, const Device &dst, std::error_code &ec) noexcept {
    WgcPeerRoute route = WGC_PEER_ROUTE_STAGED;
    detail::assign(wgc_device_peer_route(src.get(), dst.get(), &route), ec);
    return route;
}
WGC_HPP_THROWING(inline WgcPeerRoute peer_route(const Device &src, const Device &dst) {
    WgcPeerRoute route = WGC_PEER_ROUTE_STAGED;
    detail::check(wgc_device_peer_route(src.get(), dst.get(), &route));
    return route;
})

/** A communicator over distinct devices; rank i is devices[i]. Collectives
 * take one stream and one tensor per rank, in rank order. */
class Comm : public detail::Handle<WgcComm, wgc_comm_retain, wgc_comm_release> {
public:
    using Handle::Handle;
    Comm(Handle h) noexcept : Handle(std::move(h)) {}

    static Comm create(span<const Device> devices, std::error_code &ec) noexcept {
        const WgcDevice *raw[WGC_MAX_COMM_DEVICES];
        if (devices.size() > WGC_MAX_COMM_DEVICES) {
            ec = make_error_code(WGC_ERROR_INVALID_ARGUMENT);
            return Comm();
        }
        for (std::size_t i = 0; i < devices.size(); i++) raw[i] = devices[i].get();
        WgcComm *c = nullptr;
        return detail::assign(wgc_comm_create(raw, static_cast<uint32_t>(devices.size()), &c), ec) ? Comm(adopt(c))
                                                                                                   : Comm();
    }
    WGC_HPP_THROWING(static Comm create(span<const Device> devices) {
        std::error_code ec;
        Comm c = create(devices, ec);
        if (ec) detail::check(static_cast<WgcStatus>(ec.value()));
        return c;
    })

    void all_reduce(span<const Stream> streams, span<const Tensor> tensors, WgcCollectiveOp op,
                    std::error_code &ec) const noexcept {
        Views s(streams), t(tensors);
        detail::assign(ok(s, t) ? wgc_comm_all_reduce(get(), s.streams, t.tensors, op) : WGC_ERROR_INVALID_ARGUMENT,
                       ec);
    }
    void all_gather(span<const Stream> streams, span<const Tensor> inputs, span<const Tensor> outputs,
                    std::error_code &ec) const noexcept {
        Views s(streams), x(inputs), y(outputs);
        detail::assign(ok(s, x) && ok(s, y) ? wgc_comm_all_gather(get(), s.streams, x.tensors, y.tensors)
                                            : WGC_ERROR_INVALID_ARGUMENT,
                       ec);
    }
    void reduce_scatter(span<const Stream> streams, span<const Tensor> inputs, span<const Tensor> outputs,
                        WgcCollectiveOp op, std::error_code &ec) const noexcept {
        Views s(streams), x(inputs), y(outputs);
        detail::assign(ok(s, x) && ok(s, y) ? wgc_comm_reduce_scatter(get(), s.streams, x.tensors, y.tensors, op)
                                            : WGC_ERROR_INVALID_ARGUMENT,
                       ec);
    }
    void broadcast(span<const Stream> streams, span<const Tensor> tensors, uint32_t root,
                   std::error_code &ec) const noexcept {
        Views s(streams), t(tensors);
        detail::assign(ok(s, t) ? wgc_comm_broadcast(get(), s.streams, t.tensors, root) : WGC_ERROR_INVALID_ARGUMENT,
                       ec);
    }
    WGC_HPP_THROWING(void all_reduce(span<const Stream> streams, span<const Tensor> tensors,
                                     WgcCollectiveOp op = WGC_COLLECTIVE_OP_SUM) const {
        std::error_code ec;
        all_reduce(streams, tensors, op, ec);
        rethrow(ec);
    })
    WGC_HPP_THROWING(void all_gather(span<const Stream> streams, span<const Tensor> inputs,
                                     span<const Tensor> outputs) const {
        std::error_code ec;
        all_gather(streams, inputs, outputs, ec);
        rethrow(ec);
    })
    WGC_HPP_THROWING(void reduce_scatter(span<const Stream> streams, span<const Tensor> inputs,
                                         span<const Tensor> outputs, WgcCollectiveOp op = WGC_COLLECTIVE_OP_SUM) const {
        std::error_code ec;
        reduce_scatter(streams, inputs, outputs, op, ec);
        rethrow(ec);
    })
    WGC_HPP_THROWING(void broadcast(span<const Stream> streams, span<const Tensor> tensors, uint32_t root) const {
        std::error_code ec;
        broadcast(streams, tensors, root, ec);
        rethrow(ec);
    })

    uint32_t size() const noexcept {
        uint32_t n = 0;
        wgc_comm_size(get(), &n);
        return n;
    }

private:
    /** The C arrays of up to WGC_MAX_COMM_DEVICES streams or tensors (more:
     * count 0, refused). */
    struct Views {
        const WgcStream *streams[WGC_MAX_COMM_DEVICES];
        WgcTensor tensors[WGC_MAX_COMM_DEVICES];
        std::size_t count = 0;
        explicit Views(span<const Stream> s) noexcept {
            if (s.size() > WGC_MAX_COMM_DEVICES) return;
            for (std::size_t i = 0; i < s.size(); i++) streams[i] = s[i].get();
            count = s.size();
        }
        explicit Views(span<const Tensor> t) noexcept {
            if (t.size() > WGC_MAX_COMM_DEVICES) return;
            for (std::size_t i = 0; i < t.size(); i++) tensors[i] = *t[i].c();
            count = t.size();
        }
    };
    /** One entry per rank on both sides (the C call reads size() entries). */
    bool ok(const Views &a, const Views &b) const noexcept { return a.count == size() && b.count == size(); }
    WGC_HPP_THROWING(static void rethrow(const std::error_code &ec) {
        if (ec) detail::check(static_cast<WgcStatus>(ec.value()));
    })
};

#undef WGC_HPP_OP

}  // namespace wgc

#endif /* WGCOMPUTE_HPP */
