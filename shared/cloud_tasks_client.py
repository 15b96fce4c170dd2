"""The one way the product makes a Cloud Tasks client.

In the cloud it is the default client. Locally ``CLOUD_TASKS_EMULATOR_HOST`` names
the emulator (there is no official one, so Google's client does not know that
variable) and the client talks to it over an insecure gRPC channel.
"""

from __future__ import annotations

import grpc
from google.cloud import tasks_v2
from google.cloud.tasks_v2.services.cloud_tasks.transports import CloudTasksGrpcTransport

from shared.settings import Settings, get_settings


def make_tasks_client(settings: Settings | None = None) -> tasks_v2.CloudTasksClient:
    """A Cloud Tasks client for these settings.

    Args:
        settings: Defaults to this process's settings.

    Returns:
        A client of the emulator when ``cloud_tasks_emulator_host`` is set, else of Cloud Tasks.
    """
    settings = settings or get_settings()
    if settings.cloud_tasks_emulator_host:
        channel = grpc.insecure_channel(settings.cloud_tasks_emulator_host)
        return tasks_v2.CloudTasksClient(transport=CloudTasksGrpcTransport(channel=channel))
    return tasks_v2.CloudTasksClient()
