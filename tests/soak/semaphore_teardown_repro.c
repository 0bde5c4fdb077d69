/* A reproduction, without hal, of a driver defect that hal works around in StreamCore's
 * destructor (src/vulkan/stream_core.cpp).
 *
 * Each of four threads creates a timeline semaphore, submits a batch that signals 1 and a batch
 * that waits for 1 and signals 2, waits on the host until the semaphore reaches 2, and destroys
 * it. The Vulkan specification allows that: every batch that refers to the semaphore has
 * completed once its signal operation has. Mesa's common queue code as used by lavapipe (seen
 * with Mesa 22.3) releases the second batch's wait on the semaphore only after it has
 * signalled 2, on the driver's queue thread, so that thread can lock and unlock a mutex inside
 * the destroyed semaphore's memory, and unlink a list node from it. Under memcheck:
 *
 *   valgrind --fair-sched=yes ./hal_semaphore_teardown_repro 40 1 0
 *     -> "Invalid read of size 4 at pthread_mutex_lock ... Address ... is 112 bytes inside a
 *        block of size 232 free'd ... by vkDestroySemaphore", "Invalid write of size 8", from a
 *        thread the driver started (in two runs of four; the window is a race)
 *   valgrind --fair-sched=yes ./hal_semaphore_teardown_repro 40 0 0  (no wait on the semaphore)
 *   valgrind --fair-sched=yes ./hal_semaphore_teardown_repro 40 1 1  (the workaround)
 *     -> no errors
 *
 * Without valgrind the same race makes the queue thread block forever on the freed mutex (every
 * later submission then waits behind it) or corrupts the heap. The workaround (third argument
 * 1): before destroying the semaphore, submit one more batch that waits on nothing and only
 * signals it, and wait for that; the queue processes submissions in order, so by then it is done
 * with the earlier ones.
 *
 * Usage: hal_semaphore_teardown_repro [iterations [wait_on_semaphore [workaround]]]
 * (defaults 2000 1 0). Exits 0 after printing "done", unless a Vulkan call fails. */
#include <vulkan/vulkan.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { kThreads = 4 };

static VkDevice device;
static VkQueue queue;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER; /* vkQueueSubmit needs it */
static int iterations = 2000;
static int wait_on_semaphore = 1;
static int workaround = 0;

static void check(VkResult result, const char* what) {
  if (result != VK_SUCCESS) {
    fprintf(stderr, "%s failed: VkResult %d\n", what, (int)result);
    exit(1);
  }
}

/* Submits a batch without commands that waits for |wait| (0: waits for nothing) and signals
 * |signal|, both on |semaphore|. */
static void submit(VkSemaphore semaphore, uint64_t wait, uint64_t signal) {
  VkTimelineSemaphoreSubmitInfo timeline = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  timeline.waitSemaphoreValueCount = wait ? 1 : 0;
  timeline.pWaitSemaphoreValues = &wait;
  timeline.signalSemaphoreValueCount = 1;
  timeline.pSignalSemaphoreValues = &signal;
  VkSubmitInfo info = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
  info.pNext = &timeline;
  info.waitSemaphoreCount = wait ? 1 : 0;
  info.pWaitSemaphores = &semaphore;
  info.pWaitDstStageMask = &stage;
  info.signalSemaphoreCount = 1;
  info.pSignalSemaphores = &semaphore;
  pthread_mutex_lock(&queue_lock);
  check(vkQueueSubmit(queue, 1, &info, VK_NULL_HANDLE), "vkQueueSubmit");
  pthread_mutex_unlock(&queue_lock);
}

static void wait_for(VkSemaphore semaphore, uint64_t value) {
  VkSemaphoreWaitInfo info = {VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  info.semaphoreCount = 1;
  info.pSemaphores = &semaphore;
  info.pValues = &value;
  check(vkWaitSemaphores(device, &info, UINT64_MAX), "vkWaitSemaphores");
}

static void* worker(void* unused) {
  (void)unused;
  for (int i = 0; i < iterations; ++i) {
    VkSemaphoreTypeCreateInfo type = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo info = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    info.pNext = &type;
    VkSemaphore semaphore = VK_NULL_HANDLE;
    check(vkCreateSemaphore(device, &info, NULL, &semaphore), "vkCreateSemaphore");
    submit(semaphore, 0, 1);
    submit(semaphore, wait_on_semaphore ? 1 : 0, 2);
    wait_for(semaphore, 2);
    if (workaround) {
      submit(semaphore, 0, 3);
      wait_for(semaphore, 3);
    }
    /* Every batch that refers to the semaphore has completed: destroying it is allowed. */
    vkDestroySemaphore(device, semaphore, NULL);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) iterations = atoi(argv[1]);
  if (argc > 2) wait_on_semaphore = atoi(argv[2]);
  if (argc > 3) workaround = atoi(argv[3]);

  VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo instance_info = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  instance_info.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  check(vkCreateInstance(&instance_info, NULL, &instance), "vkCreateInstance");
  uint32_t count = 1;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkResult result = vkEnumeratePhysicalDevices(instance, &count, &physical);
  if ((result != VK_SUCCESS && result != VK_INCOMPLETE) || count == 0) {
    fprintf(stderr, "no Vulkan device\n");
    return 1;
  }
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = 0;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkPhysicalDeviceVulkan12Features features12 = {
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  features12.timelineSemaphore = VK_TRUE;
  VkDeviceCreateInfo device_info = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  device_info.pNext = &features12;
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  check(vkCreateDevice(physical, &device_info, NULL, &device), "vkCreateDevice");
  vkGetDeviceQueue(device, 0, 0, &queue);

  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t) pthread_create(&threads[t], NULL, worker, NULL);
  for (int t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);
  check(vkDeviceWaitIdle(device), "vkDeviceWaitIdle");
  vkDestroyDevice(device, NULL);
  vkDestroyInstance(instance, NULL);
  printf("done: %d iterations on %d threads\n", iterations, kThreads);
  return 0;
}
