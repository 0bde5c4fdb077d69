"""hal's statuses as Python exceptions: one subclass of hal.Error per status."""


class Error(Exception):
    """A hal call failed. `status` is the hal_status number, `status_name` its name
    (HAL_ERROR_...), and the message is hal_last_error(): the call, the cause, what to do."""

    status = None
    status_name = "HAL_STATUS_UNKNOWN"

    def __init__(self, message, status=None):
        super().__init__(message)
        if status is not None:
            self.status = status
        self.message = message


class InvalidArgumentError(Error, ValueError):
    status, status_name = 1, "HAL_ERROR_INVALID_ARGUMENT"


class InvalidHandleError(Error):
    status, status_name = 2, "HAL_ERROR_INVALID_HANDLE"


class NotFoundError(Error, LookupError):
    status, status_name = 3, "HAL_ERROR_NOT_FOUND"


class NotSupportedError(Error):
    status, status_name = 4, "HAL_ERROR_NOT_SUPPORTED"


class UnavailableError(Error):
    status, status_name = 5, "HAL_ERROR_UNAVAILABLE"


class OutOfMemoryError(Error, MemoryError):
    status, status_name = 6, "HAL_ERROR_OUT_OF_MEMORY"


class OutOfRangeError(Error):
    status, status_name = 7, "HAL_ERROR_OUT_OF_RANGE"


class InvalidIRError(Error):
    status, status_name = 8, "HAL_ERROR_INVALID_IR"


class CompileFailedError(Error):
    status, status_name = 9, "HAL_ERROR_COMPILE_FAILED"


class LaunchFailedError(Error):
    status, status_name = 10, "HAL_ERROR_LAUNCH_FAILED"


class NotReadyError(Error):
    status, status_name = 11, "HAL_ERROR_NOT_READY"


class TimeoutError(Error):  # noqa: A001 (hal's own name for HAL_ERROR_TIMEOUT)
    status, status_name = 12, "HAL_ERROR_TIMEOUT"


class DeviceLostError(Error):
    status, status_name = 13, "HAL_ERROR_DEVICE_LOST"


class InternalError(Error):
    status, status_name = 14, "HAL_ERROR_INTERNAL"


BY_STATUS = {cls.status: cls for cls in Error.__subclasses__()}
for _cls in [Error, *BY_STATUS.values()]:
    _cls.__module__ = "hal"  # shown as hal.NotFoundError, where users catch it


def make(status, message):
    """The exception for a failed call (used by the extension)."""
    cls = BY_STATUS.get(status, Error)
    return cls(message, status)
