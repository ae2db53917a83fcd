/** Lambda entry of the monsaas writer: the platform kinds routed to the monitoring SaaS (writer.ts). */
import { monSaasWriterDestination } from '../../shared/destinations/monsaas/build.js';
import { writerHandler } from './writer.js';

export const handler = await writerHandler({
  name: 'monsaas',
  build: monSaasWriterDestination,
  needs: 'Svc.monsaas with user events, log events, health or session samples routed to it',
});
