// GET /api/incidents[?target=] (newest first), GET /api/incidents/:id (manifest and file list),
// GET /api/incidents/:id.tar.gz (the bundle as a download) and GET /api/incidents/:id/files/<path> (one file).
// Read-only, from stateDir/incidents; ids and paths are checked against what is on disk, never joined blindly.
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import type { DaemonView } from './daemon-view.js';
import { INCIDENT_ID } from '../incidents/bundle.js';
import { bundleFiles, incidentsDir, listIncidents, readManifest } from '../incidents/store.js';
import { tarGzBundle } from '../incidents/tar.js';

export interface IncidentRouteDeps {
  /** The state directory of the running config (replaced on reload, so looked up per request). */
  stateDir: () => string;
}

const TAR_GZ = '.tar.gz';

export function incidentRoutes(deps: IncidentRouteDeps): FastifyPluginAsync {
  return async (app) => {
    app.get<{ Querystring: { target?: string } }>('/api/incidents', async (req, reply) => {
      const list = await listIncidents(incidentsDir(deps.stateDir()), { target: req.query.target });
      return reply.send({
        incidents: list.map((i) => ({
          ...i,
          url: `/api/incidents/${i.id}`,
          download: `/api/incidents/${i.id}${TAR_GZ}`,
        })),
      });
    });

    app.get<{ Params: { id: string } }>('/api/incidents/:id', async (req, reply) => {
      const root = incidentsDir(deps.stateDir());
      const raw = req.params.id;
      const id = raw.endsWith(TAR_GZ) ? raw.slice(0, -TAR_GZ.length) : raw;
      const manifest = INCIDENT_ID.test(id) ? await readManifest(root, id) : undefined;
      if (manifest === undefined) return reply.code(404).send({ error: `no incident ${JSON.stringify(id)}` });
      if (raw.endsWith(TAR_GZ)) {
        return reply
          .type('application/gzip')
          .header('content-disposition', `attachment; filename="${id}${TAR_GZ}"`)
          .send(tarGzBundle(root, id));
      }
      return reply.send({ id, manifest, files: await bundleFiles(root, id) });
    });

    app.get<{ Params: { id: string; '*': string } }>('/api/incidents/:id/files/*', async (req, reply) => {
      const root = incidentsDir(deps.stateDir());
      const { id } = req.params;
      const path = req.params['*'];
      const files = INCIDENT_ID.test(id) ? await bundleFiles(root, id).catch(() => []) : [];
      if (!files.some((f) => f.path === path))
        return reply
          .code(404)
          .send({ error: `no file ${JSON.stringify(path)} in incident ${JSON.stringify(id)}` });
      const type = path.endsWith('.json') ? 'application/json' : 'text/plain; charset=utf-8';
      return reply.type(type).send(createReadStream(join(root, id, path)));
    });
  };
}

export function daemonIncidentRoutes(daemon: DaemonView): FastifyPluginAsync {
  return incidentRoutes({ stateDir: () => daemon.loaded.config.stateDir });
}
