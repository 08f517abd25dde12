# META-SRE server image: `docker build -t metasre .` then
# `docker run --rm -p 50051:50051 -v metasre-data:/data metasre` (serves on 0.0.0.0:50051; the
# trajectory store lives in the volume, so `--handover` restarts lose nothing). README: Docker.

# -- build: wheels, dependencies first ------------------------------------------------------
# The tag is exact (the Python the tests ran on); pin a digest too where the registry is known.
FROM python:3.11.7-slim-bookworm AS build
WORKDIR /src
# The dependencies are a layer of their own, keyed on constraints.txt alone: editing the code
# does not re-download them. constraints.txt pins the tested versions (.ci/constraints).
COPY constraints.txt ./
RUN pip wheel --no-cache-dir --wheel-dir /deps -r constraints.txt
# setuptools builds the project's wheel; pinned too, and without build isolation, which would
# fetch whatever setuptools is newest.
RUN pip install --no-cache-dir setuptools==84.2.1
COPY pyproject.toml README.md ./
COPY simulator ./simulator
COPY service ./service
COPY agents ./agents
COPY cli ./cli
COPY conformance ./conformance
COPY protos ./protos
RUN pip wheel --no-cache-dir --no-deps --no-build-isolation --wheel-dir /app .

# -- runtime: the wheels only, an unprivileged user, a store volume --------------------------
FROM python:3.11.7-slim-bookworm
RUN groupadd --gid 10001 metasre && useradd --create-home --uid 10001 --gid 10001 metasre \
    && mkdir -p /data && chown 10001:10001 /data
COPY constraints.txt /tmp/constraints.txt
COPY --from=build /deps /deps
RUN pip install --no-cache-dir --no-index --find-links=/deps -r /tmp/constraints.txt \
    && rm -rf /deps
COPY --from=build /app /app
RUN pip install --no-cache-dir --no-index --no-deps /app/*.whl && rm -rf /app
# Numeric, so the runtime (and Kubernetes' runAsNonRoot) can tell it is not root without
# reading /etc/passwd. The sandbox needs no root: Landlock, seccomp and rlimits contain agent
# code for an unprivileged user; `metasre serve` refuses to start if the host kernel lacks them.
USER 10001:10001
WORKDIR /home/metasre
# The trajectory store: mount a named volume here, or every container starts empty.
VOLUME ["/data"]
EXPOSE 50051
ENV PYTHONUNBUFFERED=1
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["metasre", "health", "--target", "127.0.0.1:50051"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["metasre"]
# --handover: `docker stop` leaves the sessions in the volume's store, and the next container on
# it rebuilds them (agents resume their seats); without it a restart would end every episode.
CMD ["serve", "--host", "0.0.0.0", "--port", "50051", "--store", "/data/metasre.db", "--handover"]
